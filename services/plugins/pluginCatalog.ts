import type { NatsConnection } from '@nats-io/transport-node';
import { PluginPing, type PluginView } from '../../schemas/plugins/views.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryAggregate, type PluginRegistryState } from './registry/registry.ts';

/** How long `plugins.list` listens for replicas' answers: long enough for a loaded process, short for a CLI. */
const PING_WINDOW_MS = 500;

/** What plugins registered, read from the log (one small aggregate, so no read model is needed). */
export class PluginCatalog {
  readonly #repository: AggregateRepository;

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
  ) {
    this.#repository = new AggregateRepository(store);
  }

  async registry(): Promise<PluginRegistryState> {
    return (await this.#repository.load(pluginRegistryAggregate, PLUGIN_REGISTRY_ID)).state;
  }

  /** Every registered plugin with the replicas that answered a ping just now; `alive` when at least one did. */
  async list(): Promise<PluginView[]> {
    const plugins = [...(await this.registry()).plugins.values()];
    return Promise.all(
      plugins.map(async (plugin) => {
        const replicas = await this.replicasOf(plugin.pluginId);
        return { ...plugin, alive: replicas.length > 0, replicas };
      }),
    );
  }

  private async replicasOf(pluginId: string): Promise<PluginView['replicas']> {
    const replicas: PluginView['replicas'] = [];
    try {
      const answers = await this.nc.requestMany(Subjects.pluginPing(pluginId), '', { strategy: 'timer' as never, maxWait: PING_WINDOW_MS });
      for await (const msg of answers) {
        const ping = PluginPing.safeParse(msg.json());
        if (ping.success && ping.data.pluginId === pluginId)
          replicas.push({ instanceId: ping.data.instanceId, version: ping.data.version, startedAt: ping.data.startedAt });
      }
    } catch {
      // No responders: a plugin with no live replica.
    }
    return replicas.sort((a, b) => a.instanceId.localeCompare(b.instanceId));
  }
}
