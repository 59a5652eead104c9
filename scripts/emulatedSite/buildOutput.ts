import { resolve } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where builds put their work: `<BC_DATA_DIR or .data>/cache/debs` for downloads, `…/build/<name>` for outputs. */
export function buildDirs(name: string, env: NodeJS.ProcessEnv = process.env): { cacheDir: string; outDir: string } {
  const dataDir = resolve(repoRoot, env.BC_DATA_DIR ?? '.data');
  return { cacheDir: resolve(dataDir, 'cache/debs'), outDir: resolve(dataDir, 'build', name) };
}
