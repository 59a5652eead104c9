/**
 * Installs the QEMU runtime (`plugins/qemu-microvm/`) into a `bcd` plugins folder as one pinned program:
 * `<plugins>/qemu-microvm/plugin.mjs` (the runtime bundled, for a host with nothing but `node`, QEMU and its tools) and
 * `<plugins>/qemu-microvm/bcx-plugin.json` pinning its sha256, with the runtime's own arguments (see
 * plugins/qemu-microvm/config.ts) after `--`:
 *
 *   npm run plugin:qemu-microvm -- --plugins /var/lib/bcd/plugins -- --images /var/lib/bc/images --guest-port 22
 *
 * It runs sandboxed like any plugin (under TCG); see docs/bcx.md.
 */
import { parseArgs } from 'node:util';
import { microVmConfig } from '../../plugins/qemu-microvm/config.ts';
import { installPluginBundle, isMainModule } from './pinnedPluginBundle.ts';

export const QEMU_MICROVM_ID = 'qemu-microvm';

export async function installQemuMicroVmPlugin(
  pluginsFolder: string,
  runtimeArgs: readonly string[],
  interpreter = '/usr/bin/node',
): Promise<{ folder: string; sha256: string }> {
  // Arguments the runtime would refuse at its start are refused here, before anything is pinned.
  microVmConfig(runtimeArgs);
  return installPluginBundle(pluginsFolder, { id: QEMU_MICROVM_ID, entry: 'plugins/qemu-microvm/index.ts', interpreter, args: runtimeArgs });
}

if (isMainModule(import.meta.url)) {
  const { values, positionals } = parseArgs({ options: { plugins: { type: 'string' } }, allowPositionals: true });
  if (!values.plugins) {
    console.error('usage: npm run plugin:qemu-microvm -- --plugins <folder> -- --images <dir> [runtime arguments]');
    process.exit(2);
  }
  const { folder, sha256 } = await installQemuMicroVmPlugin(values.plugins, positionals);
  console.log(`${folder}: pinned sha256 ${sha256}`);
}
