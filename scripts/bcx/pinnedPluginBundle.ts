import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface PluginBundle {
  /** The plugin id: its folder under the plugins folder, and what `bcd` knows it by. */
  readonly id: string;
  /** The plugin's entry point, relative to the repository. */
  readonly entry: string;
  /** What runs the program. */
  readonly interpreter: string;
  /** The program's own arguments, pinned beside it. */
  readonly args: readonly string[];
}

/**
 * One of the project's bcx plugins as `bcd` runs it: `<plugins>/<id>/plugin.mjs`, the plugin bundled with its
 * dependencies (for a host with nothing but `node`), and `<plugins>/<id>/bcx-plugin.json` pinning its sha256 with its
 * arguments (docs/bcx.md).
 */
export async function installPluginBundle(pluginsFolder: string, bundle: PluginBundle): Promise<{ folder: string; sha256: string }> {
  const folder = join(pluginsFolder, bundle.id);
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const program = join(folder, 'plugin.mjs');
  await build({
    entryPoints: [join(repoRoot, bundle.entry)],
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
  const pin = { id: bundle.id, program: 'plugin.mjs', interpreter: bundle.interpreter, args: [...bundle.args], sha256 };
  writeFileSync(join(folder, 'bcx-plugin.json'), `${JSON.stringify(pin, null, 2)}\n`, { mode: 0o644 });
  return { folder, sha256 };
}

/** Whether this module is the program `node`/`tsx` was started with (an install script's command-line entry). */
export const isMainModule = (moduleUrl: string) => process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(moduleUrl);
