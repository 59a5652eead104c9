import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { pluginUserName } from '../../daemon/bcx/sandbox/pluginUser.ts';

/**
 * A plugins folder for bcx tests, outside `/tmp` (the sandbox's own) and readable by a plugin's account (the checkout
 * may sit under a 0700 home), holding a plugin of `test/fixtures/bcx/` (default `memoryRuntime.ts`), or the one at an
 * absolute path (a walkthrough's own), bundled into one file for `/usr/bin/node`.
 */
export async function bcxPluginFolder(fixture = 'memoryRuntime') {
  const entry = isAbsolute(fixture) ? fixture : new URL(`../fixtures/bcx/${fixture}.ts`, import.meta.url).pathname;
  const root = mkdtempSync('/var/tmp/bcx-');
  chmodSync(root, 0o755);
  const folder = join(root, 'plugins.d');
  const bundle = join(root, `${basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [entry],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  const pinned = new Set<string>();
  return {
    folder,
    stateRoot: join(root, 'state'),
    /** Pins the bundled plugin as plugin `id` (its digest, unless `sha256` says otherwise). */
    pin(id: string, args: string[] = [], sha256?: string) {
      const dir = join(folder, id);
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      const program = join(dir, 'plugin.mjs');
      writeFileSync(program, readFileSync(bundle), { mode: 0o644 });
      const digest = sha256 ?? createHash('sha256').update(readFileSync(program)).digest('hex');
      writeFileSync(join(dir, 'bcx-plugin.json'), JSON.stringify({ id, program: 'plugin.mjs', interpreter: '/usr/bin/node', args, sha256: digest }));
      pinned.add(id);
    },
    [Symbol.dispose]() {
      // A plugin refused before its launch has no account (userdel exits 6 for an unknown one).
      for (const id of pinned) spawnSync('userdel', [pluginUserName(id)], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
}
