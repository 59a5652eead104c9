import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../platform/logger.ts';
import { repoRoot } from '../platform/repoRoot.ts';
import { precompress } from './precompress.ts';

/** Where the built console lives (gitignored); the API serves it at `/`. */
export const consoleDistDir = join(repoRoot, 'dist', 'console');

/** What the bundle is made from: a change to any of these makes the build stale. */
const inputs = ['services/console/app', 'services/console/vite.config.ts', 'schemas', 'package-lock.json'];
const stampFile = join(consoleDistDir, 'build-stamp.json');
const lockDir = `${consoleDistDir}.lock`;
/** A lock older than this belongs to a build that died. */
const staleLockMs = 5 * 60_000;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((e) => filesUnder(join(path, e.name)));
}

/** A digest of every input file's path and bytes: content, not mtimes, so a fresh checkout of the same tree is fresh. */
export function consoleInputsDigest(): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap((p) => filesUnder(join(repoRoot, p))).sort()) {
    hash.update(relative(repoRoot, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const builtDigest = (): string | undefined => {
  try {
    return (JSON.parse(readFileSync(stampFile, 'utf8')) as { inputs?: string }).inputs;
  } catch {
    return undefined;
  }
};

/** Vite in a child process (its memory is gone once it is done), into `outDir`. */
async function viteBuild(outDir: string): Promise<void> {
  const vite = join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) throw new Error('vite is not installed (npm ci installs it with the dev dependencies)');
  const child = spawn(
    process.execPath,
    [vite, 'build', '--config', join(repoRoot, 'services/console/vite.config.ts'), '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'],
    {
      cwd: repoRoot,
      // A NODE_ENV inherited from the caller (a test runner sets `test`) would make Vite bundle React's development build.
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`vite build failed (exit ${code}):\n${output}`);
}

async function takeLock(): Promise<void> {
  mkdirSync(join(repoRoot, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > staleLockMs) rmSync(lockDir, { recursive: true, force: true });
      else await sleep(200);
    }
  }
}

/**
 * Builds the console into `dist/console` unless the build there was made from the same inputs (`force`: always).
 * Several stacks starting at once build it once: one holds the lock, the others find the build fresh after it. The new
 * build is made beside the old and moved into place, so an API serving the old one never sees half a build.
 */
export async function ensureConsoleBuilt(log: Logger, options: { force?: boolean } = {}): Promise<'fresh' | 'built'> {
  const digest = consoleInputsDigest();
  if (!options.force && builtDigest() === digest) return 'fresh';
  await takeLock();
  try {
    if (!options.force && builtDigest() === digest) return 'fresh';
    const started = Date.now();
    const next = `${consoleDistDir}.next-${process.pid}`;
    await viteBuild(next);
    precompress(next);
    writeFileSync(join(next, 'build-stamp.json'), JSON.stringify({ inputs: digest, builtAt: new Date().toISOString() }));
    const old = `${consoleDistDir}.old-${process.pid}`;
    if (existsSync(consoleDistDir)) renameSync(consoleDistDir, old);
    renameSync(next, consoleDistDir);
    rmSync(old, { recursive: true, force: true });
    log.info({ dir: consoleDistDir, ms: Date.now() - started }, 'built the console');
    return 'built';
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
