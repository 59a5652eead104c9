import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { compiledDir, repoRoot, sourceRoots, stampFile } from './compiledEntry.mjs';

/** Files next to the sources that modules read at run time (`agentResult.proto`, the BMC simulator's fixtures and certs). */
const isAsset = (name: string) => !name.endsWith('.ts') && !name.endsWith('.tsx');
const skipped = (path: string) => path.startsWith('services/console/app') || path.includes('node_modules');

/**
 * `npm run build`: compiles the product (tsconfig.build.json: tsc with `rewriteRelativeImportExtensions`, so the
 * sources' `.ts` imports become `.js`) into dist/node with the source layout, copies the run-time assets beside it and
 * writes the stamp last. `npm start`, the CLI and the processes they start then run it without tsx.
 */
export function buildProduct(options: { quiet?: boolean } = {}): { ms: number; files: number; assets: number } {
  const started = performance.now();
  // The stamp goes first, so a build that fails halfway is never taken for a fresh one.
  rmSync(stampFile, { force: true });
  const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', join(repoRoot, 'tsconfig.build.json')], {
    cwd: repoRoot,
    stdio: options.quiet ? 'pipe' : 'inherit',
    encoding: 'utf8',
  });
  if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${tsc.status}):\n${tsc.stdout ?? ''}${tsc.stderr ?? ''}`);
  let files = 0;
  let assets = 0;
  for (const root of sourceRoots) {
    for (const entry of readdirSync(join(repoRoot, root), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const from = join(entry.parentPath, entry.name);
      const path = relative(repoRoot, from);
      if (skipped(path)) continue;
      if (!isAsset(entry.name)) {
        files++;
        continue;
      }
      mkdirSync(dirname(join(compiledDir, path)), { recursive: true });
      copyFileSync(from, join(compiledDir, path));
      assets++;
    }
  }
  writeFileSync(stampFile, `${JSON.stringify({ builtAt: new Date().toISOString() })}\n`);
  return { ms: Math.round(performance.now() - started), files, assets };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { ms, files, assets } = buildProduct();
  console.log(`built ${files} modules and copied ${assets} assets into ${relative(process.cwd(), compiledDir) || compiledDir} in ${(ms / 1000).toFixed(1)} s`);
}
