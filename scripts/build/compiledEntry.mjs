// Which build of the product a launcher (`npm start`, the CLI) runs: the compiled one in dist/node when `npm run build`
// made it from sources no newer than it, else the TypeScript sources through tsx. Plain JavaScript, so it runs before
// any loader is registered.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const compiledDir = join(repoRoot, 'dist', 'node');
/** The stamp `npm run build` writes last: a build without it did not finish. */
export const stampFile = join(compiledDir, 'build-stamp.json');
/** What the build compiles (tsconfig.build.json's include). */
export const sourceRoots = ['services', 'schemas', 'projections', 'plugins', 'daemon', 'scripts/cli'];

/** Folders without TypeScript the walk skips: data (the BMC simulator's Redfish trees) and the console's app (Vite's). */
const noSources = new Set(['fixtures', 'node_modules', 'app']);

/** The newest modification time of any TypeScript source the build compiles. */
function newestSource(dir = undefined) {
  if (dir === undefined) return Math.max(...sourceRoots.map((root) => newestSource(join(repoRoot, root))));
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!noSources.has(entry.name)) newest = Math.max(newest, newestSource(join(dir, entry.name)));
    } else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(dir, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The compiled `.js` of `source` (a path from the repository root, `services/stack/start.ts`) when the build is there
 * and fresh; undefined otherwise (with `reason`). A source edited after the build makes it stale: running what the
 * sources no longer say would be worse than the slower start through tsx.
 */
export function compiledEntry(source) {
  const compiled = join(compiledDir, source.replace(/\.ts$/, '.js'));
  if (!existsSync(stampFile) || !existsSync(compiled)) return { reason: 'no build (npm run build makes one)' };
  if (newestSource() > statSync(stampFile).mtimeMs) return { reason: 'the build is older than the sources (npm run build refreshes it)' };
  return { path: compiled };
}
