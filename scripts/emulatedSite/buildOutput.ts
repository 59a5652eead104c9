import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where builds put their work: `<BC_DATA_DIR or .data>/cache/debs` for downloads, `…/build/<name>` for outputs. */
export function buildDirs(name: string, env: NodeJS.ProcessEnv = process.env): { cacheDir: string; outDir: string } {
  const dataDir = resolve(repoRoot, env.BC_DATA_DIR ?? '.data');
  return { cacheDir: resolve(dataDir, 'cache/debs'), outDir: resolve(dataDir, 'build', name) };
}

/** The output folder of a build command: `--out <dir>`, else the data dir's `build/<name>`. */
export function cliBuildDirs(name: string, argv: readonly string[] = process.argv.slice(2)): { cacheDir: string; outDir: string } {
  const { values } = parseArgs({ args: [...argv], options: { out: { type: 'string' } } });
  const dirs = buildDirs(name);
  return { cacheDir: dirs.cacheDir, outDir: values.out ? resolve(values.out) : dirs.outDir };
}

/** Runs a build in a fresh `<outDir>/.work`, removed afterwards whatever happens. */
export async function inWorkDir<T>(outDir: string, build: (work: string) => Promise<T>): Promise<T> {
  const work = join(outDir, '.work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    return await build(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `<outDir>/manifest.json`: every input of the build with its version or digest, and the outputs' digests. */
export function writeManifest(outDir: string, manifest: object): string {
  const file = join(outDir, 'manifest.json');
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return file;
}
