import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, lstatSync, lutimesSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from './hostTools.ts';

/** Every path under `root` (files, folders, links), relative with a `./` prefix, in byte order. */
export function sortedEntries(root: string): string[] {
  const out: string[] = ['.'];
  const walk = (relative: string): void => {
    for (const name of readdirSync(join(root, relative)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))) {
      const path = relative === '.' ? `./${name}` : `${relative}/${name}`;
      out.push(path);
      if (lstatSync(join(root, path)).isDirectory()) walk(path);
    }
  };
  walk('.');
  return out;
}

/**
 * Removes what a copy leaves behind that is not content: every mtime becomes `epoch` (SOURCE_DATE_EPOCH) and every
 * mode 0755 (folders, executables) or 0644, whatever the umask was, so an archive of the tree depends on its bytes only.
 */
export function normalizeTree(root: string, epoch: number): void {
  // Children before parents: setting a child's time would otherwise bump nothing, but chmod order does not matter.
  for (const path of sortedEntries(root).reverse()) {
    const full = join(root, path);
    const stat = lstatSync(full);
    if (!stat.isSymbolicLink()) chmodSync(full, stat.isDirectory() || (stat.mode & 0o111) !== 0 ? 0o755 : 0o644);
    lutimesSync(full, epoch, epoch);
  }
}

/**
 * A gzip'd newc cpio archive of `root` (an initramfs), byte-for-byte reproducible: entries in byte order, owner
 * 0:0, inode and device numbers renumbered (`cpio --reproducible`), fixed mtimes, and no name or time in the gzip
 * header (`gzip -n`).
 */
export function writeInitramfs(root: string, outFile: string, epoch: number): void {
  normalizeTree(root, epoch);
  const list = `${sortedEntries(root).join('\0')}\0`;
  const cpio = runTool('cpio', ['--quiet', '--create', '--null', '--format=newc', '--reproducible', '--owner=0:0'], { cwd: root, input: list });
  writeFileSync(outFile, runTool('gzip', ['-n', '-9', '-c'], { input: cpio }));
}

export function sha256OfFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

/** SOURCE_DATE_EPOCH when set (reproducible-builds.org convention), else the last commit's time, else 0. */
export function sourceDateEpoch(repoRoot: string, env: NodeJS.ProcessEnv = process.env): number {
  if (env.SOURCE_DATE_EPOCH && /^\d+$/.test(env.SOURCE_DATE_EPOCH)) return Number(env.SOURCE_DATE_EPOCH);
  try {
    return Number(runTool('git', ['log', '-1', '--format=%ct'], { cwd: repoRoot }).toString('utf8').trim()) || 0;
  } catch {
    return 0;
  }
}
