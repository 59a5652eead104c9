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
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { microVmConfig } from '../../plugins/qemu-microvm/config.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const QEMU_MICROVM_ID = 'qemu-microvm';

export async function installQemuMicroVmPlugin(
  pluginsFolder: string,
  runtimeArgs: readonly string[],
  interpreter = '/usr/bin/node',
): Promise<{ folder: string; sha256: string }> {
  // Arguments the runtime would refuse at its start are refused here, before anything is pinned.
  microVmConfig(runtimeArgs);
  const folder = join(pluginsFolder, QEMU_MICROVM_ID);
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const program = join(folder, 'plugin.mjs');
  await build({
    entryPoints: [join(repoRoot, 'plugins/qemu-microvm/index.ts')],
    outfile: program,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'warning',
    absWorkingDir: repoRoot,
  });
  const sha256 = createHash('sha256').update(readFileSync(program)).digest('hex');
  const pin = { id: QEMU_MICROVM_ID, program: 'plugin.mjs', interpreter, args: [...runtimeArgs], sha256 };
  writeFileSync(join(folder, 'bcx-plugin.json'), `${JSON.stringify(pin, null, 2)}\n`, { mode: 0o644 });
  return { folder, sha256 };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({ options: { plugins: { type: 'string' } }, allowPositionals: true });
  if (!values.plugins) {
    console.error('usage: npm run plugin:qemu-microvm -- --plugins <folder> -- --images <dir> [runtime arguments]');
    process.exit(2);
  }
  const { folder, sha256 } = await installQemuMicroVmPlugin(values.plugins, positionals);
  console.log(`${folder}: pinned sha256 ${sha256}`);
}
