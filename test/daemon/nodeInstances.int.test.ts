import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { processAlive } from '../support/processAlive.ts';
import { runtimeConformance } from '../support/runtimeConformance.ts';
import { log } from './harness.ts';

/** What `test/fixtures/bcx/processRuntime.ts` keeps of an instance. */
interface PluginEntry {
  pid: number | null;
  userDataApplies: number;
  lastUserData: string | null;
}

// The fixture runtime whose instances are `sleep` processes, sandboxed (docs/bcx.md): the conformance suite's own check.
runtimeConformance('process-runtime', async () => {
  const plugins = await bcxPluginFolder('processRuntime');
  plugins.pin('process-runtime');
  const running = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log });
  const pluginState = join(plugins.stateRoot, 'plugins/process-runtime');
  const entries = (): Record<string, PluginEntry> => {
    try {
      return JSON.parse(readFileSync(join(pluginState, 'instances.json'), 'utf8')) as Record<string, PluginEntry>;
    } catch {
      return {};
    }
  };
  const pidOf = (id: string) => {
    const pid = entries()[id]?.pid;
    return processAlive(pid) ? pid! : null;
  };
  return {
    runtime: 'process-runtime',
    running,
    images: { plain: 'test:plain', error: 'test:error', slow: 'test:slow' },
    errorMessage: 'the image does not boot',
    addresses: ['127.0.0.1'],
    warmStart: true,
    workload: async (id) => (pidOf(id) === null ? null : String(pidOf(id))),
    // A `sleep` reads nothing: the plugin's record of what its last apply carried stands in for it.
    userDataInside: async (id) => entries()[id]?.lastUserData ?? null,
    userDataApplies: async (id) => entries()[id]?.userDataApplies ?? 0,
    killWorkload: async (id) => void process.kill(pidOf(id)!, 'SIGKILL'),
    pluginPid: async () => Number(readFileSync(join(pluginState, 'plugin.pid'), 'utf8')),
    [Symbol.asyncDispose]: async () => {
      for (const entry of Object.values(entries())) if (processAlive(entry.pid)) process.kill(entry.pid!, 'SIGKILL');
      plugins[Symbol.dispose]();
    },
  };
});
