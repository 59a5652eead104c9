/**
 * Installs the crun runtime (`plugins/crun-runtime/`) into a `bcd` plugins folder as one pinned program:
 * `<plugins>/<id>/plugin.mjs` (the runtime bundled with its dependencies, for a host with nothing but `node`) and
 * `<plugins>/<id>/bcx-plugin.json` pinning its sha256, its args naming the runtime's config file.
 *
 *   npm run plugin:crun-runtime -- --plugins /var/lib/bcd/plugins --config /etc/bc/crun-runtime.json [--id crun]
 *
 * `bcd node` then runs it only if it is on the privileged list (`--privileged-plugin crun`): see docs/bcx.md.
 */
import { isAbsolute } from 'node:path';
import { parseArgs } from 'node:util';
import { installPluginBundle, isMainModule } from './pinnedPluginBundle.ts';

export interface CrunRuntimeInstall {
  /** The plugin id, the `runtime` instances name (default `crun`). */
  readonly id?: string;
  /** The runtime's config file (an absolute path on the host that runs it). */
  readonly configPath: string;
  /** What runs the program (default `/usr/bin/node`). */
  readonly interpreter?: string;
}

export async function installCrunRuntimePlugin(pluginsFolder: string, install: CrunRuntimeInstall): Promise<{ folder: string; sha256: string }> {
  if (!isAbsolute(install.configPath)) throw new Error(`--config must be an absolute path, not ${install.configPath}`);
  const id = install.id ?? 'crun';
  const args = ['--config', install.configPath, '--id', id];
  return installPluginBundle(pluginsFolder, { id, entry: 'plugins/crun-runtime/main.ts', interpreter: install.interpreter ?? '/usr/bin/node', args });
}

if (isMainModule(import.meta.url)) {
  const { values } = parseArgs({ options: { plugins: { type: 'string' }, config: { type: 'string' }, id: { type: 'string' } } });
  if (!values.plugins || !values.config) {
    console.error('usage: npm run plugin:crun-runtime -- --plugins <folder> --config <file> [--id crun]');
    process.exit(2);
  }
  const { folder, sha256 } = await installCrunRuntimePlugin(values.plugins, { configPath: values.config, ...(values.id ? { id: values.id } : {}) });
  console.log(`${folder}: pinned sha256 ${sha256}`);
}
