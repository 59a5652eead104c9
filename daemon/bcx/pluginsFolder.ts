import type { BcxDriverAdvert } from '../../schemas/bcx/bcxProtocol.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { BcxPluginHost } from './bcxPluginHost.ts';
import { readPluginPins, type PluginNotRun } from './pluginPins.ts';

export interface RunningPlugins {
  /** The hosts of the plugins that started, by plugin id. */
  readonly hosts: ReadonlyMap<string, BcxPluginHost>;
  /** Folders not run, each with why (an invalid pin, a first start that failed). */
  readonly unusable: readonly PluginNotRun[];
  /** What the heartbeat advertises: the plugins running now that said hello. */
  drivers(): BcxDriverAdvert[];
  stop(): Promise<void>;
}

/**
 * Starts every plugin the folder pins, each in its own host (`BcxPluginHost`), the ones on `privileged` without the
 * sandbox. A plugin that does not start is reported and left out; the others run. A plugin between restarts is not
 * advertised until it says hello again.
 */
export async function startPluginsFolder(
  folder: string,
  options: { stateRoot: string; privileged: ReadonlySet<string>; log: Logger },
): Promise<RunningPlugins> {
  const { plugins, unusable } = await readPluginPins(folder);
  const failed: PluginNotRun[] = [...unusable];
  const hosts = new Map<string, BcxPluginHost>();
  for (const plugin of plugins) {
    const host = new BcxPluginHost(plugin, { stateRoot: options.stateRoot, privileged: options.privileged.has(plugin.pin.id), log: options.log });
    try {
      await host.start();
      hosts.set(plugin.pin.id, host);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      failed.push({ folder: plugin.program, code: typeof code === 'string' ? code : 'PLUGIN_START_FAILED', message: (err as Error).message });
    }
  }
  for (const f of failed) options.log.warn(f, 'bcx plugin not run');
  return {
    hosts,
    unusable: failed,
    drivers: () =>
      [...hosts.values()].flatMap((h) => {
        if (!h.ready || !h.manifest) return [];
        const { id, version, kinds, features } = h.manifest;
        return [{ id, version, kinds, ...(features?.length ? { features } : {}) }];
      }),
    stop: async () => void (await Promise.all([...hosts.values()].map((h) => h.stop()))),
  };
}
