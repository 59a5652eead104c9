import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { pluginEvents, type PluginEvent } from '../../../schemas/plugins/events.ts';
import type { PluginRegistration } from '../../../schemas/plugins/registration.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** The one registry instance: every registration goes through it, so two plugins cannot claim one step id at once. */
export const PLUGIN_REGISTRY_ID = 'catalog';

export interface RegisteredPlugin extends PluginRegistration {
  readonly registeredAt: string;
}

export interface PluginRegistryState {
  /** The latest registration of each plugin. */
  readonly plugins: ReadonlyMap<string, RegisteredPlugin>;
}

/** Which plugin owns a step id / profile id, if any. */
export function ownerOf(state: PluginRegistryState, kind: 'steps' | 'profiles', id: string): string | undefined {
  for (const plugin of state.plugins.values()) if (plugin[kind].some((item) => item.id === id)) return plugin.pluginId;
  return undefined;
}

/** The plugin registry (`bc.evt.plugins.registry.catalog`): the steps, profiles, drivers and providers plugins announced. */
export const pluginRegistryAggregate = defineAggregate<PluginRegistryState, PluginEvent>({
  module: 'plugins',
  type: 'registry',
  initialState: { plugins: new Map() },
  catalog: new EventCatalog(pluginEvents),
  evolve(state, event) {
    const plugins = new Map(state.plugins);
    plugins.set(event.data.pluginId, event.data);
    return { plugins };
  },
});
