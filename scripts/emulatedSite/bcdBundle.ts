import { build } from 'esbuild';
import { cpSync, copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(repoRoot, 'package.json'));

/** Node packages that stay outside the bundle: native addons, loaded from `node_modules` next to `bcd.js`. */
const nativePackages = ['better-sqlite3', 'bindings', 'file-uri-to-path'] as const;

const skippedDirs = /^\/(src|deps|docs|test|build\/(?!Release)[^/]+|build\/Release\/(obj|obj\.target))(\/|$)/;

function isRuntimeFile(relative: string): boolean {
  if (skippedDirs.test(relative)) return false;
  const leaf = relative.split('/').pop() ?? '';
  if (!leaf.includes('.')) return true;
  return /\.(js|cjs|mjs|json)$/.test(leaf) || leaf === 'better_sqlite3.node';
}

/** One entry bundled into a self-contained ES module for a machine with nothing but `node`. */
async function bundleEntry(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: [...nativePackages],
    // CommonJS dependencies bundled into an ES module still call require() for Node built-ins.
    banner: { js: "import { createRequire as __bcdRequire } from 'node:module'; const require = __bcdRequire(import.meta.url);" },
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'warning',
    absWorkingDir: repoRoot,
  });
}

/**
 * Bundles `daemon/bcd.ts` into one ES module `<into>/bcd.js` for a machine with nothing but `node`. better-sqlite3
 * (the agents' command journal) is a native addon: its JavaScript and `better_sqlite3.node` are copied beside the
 * bundle under `node_modules/`. The agent-result `.proto` is read at run time next to the module that loads it, so it
 * is copied next to the bundle too. The bundle has no timestamps or absolute paths, so the same sources give the
 * same bytes.
 */
export async function bundleBcd(into: string): Promise<{ files: string[] }> {
  mkdirSync(into, { recursive: true });
  // The bench program (`scripts/emulatedSite/ramdiskBench.ts`) runs only when a boot's kernel line asks for it.
  for (const [entry, outfile] of [
    ['daemon/bcd.ts', 'bcd.js'],
    ['scripts/emulatedSite/ramdiskBench.ts', 'ramdisk-bench.js'],
  ] as const)
    await bundleEntry(join(repoRoot, entry), join(into, outfile));
  copyFileSync(join(repoRoot, 'schemas/agent/agentResult.proto'), join(into, 'agentResult.proto'));
  const files = ['bcd.js', 'ramdisk-bench.js', 'agentResult.proto'];
  for (const name of nativePackages) {
    const pkgDir = dirname(require.resolve(`${name}/package.json`));
    const target = join(into, 'node_modules', name);
    // Only what runs: JavaScript, package.json and the one compiled addon; not the C sources or the build tree.
    cpSync(pkgDir, target, { recursive: true, filter: (src) => isRuntimeFile(src.slice(pkgDir.length)) });
    files.push(`node_modules/${name}`);
  }
  return { files };
}
