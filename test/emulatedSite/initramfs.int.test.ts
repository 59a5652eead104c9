import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, chmodSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256OfFile, sortedEntries, writeInitramfs } from '../../scripts/emulatedSite/reproducibleTree.ts';

const scratch = mkdtempSync(join(tmpdir(), 'emusite-initramfs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The same content, made in a different order, with different times and modes each time. */
function makeTree(root: string, variant: number): void {
  mkdirSync(join(root, 'bin'), { recursive: true });
  const files: [string, string][] = [
    ['init', '#!/bin/sh\necho hi\n'],
    ['bin/tool', 'tool'],
    ['a-b', 'dash'],
    ['etc/hosts', '127.0.0.1 localhost\n'],
  ];
  for (const [name, content] of variant === 0 ? files : [...files].reverse()) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), content);
    utimesSync(join(root, name), 1000 + variant * 77, 2000 + variant * 99);
  }
  chmodSync(join(root, 'init'), variant === 0 ? 0o700 : 0o755);
  chmodSync(join(root, 'etc/hosts'), variant === 0 ? 0o600 : 0o664);
  symlinkSync('tool', join(root, 'bin/sh'));
}

describe('initramfs archive', () => {
  it('lists folders before what they hold, in byte order', () => {
    const root = join(scratch, 'order');
    makeTree(root, 0);
    expect(sortedEntries(root)).toEqual(['.', './a-b', './bin', './bin/sh', './bin/tool', './etc', './etc/hosts', './init']);
  });

  it('gives the same bytes for the same content, whatever order, times and umask made the tree', async () => {
    const digests: string[] = [];
    for (const variant of [0, 1]) {
      const root = join(scratch, `tree${variant}`);
      makeTree(root, variant);
      writeInitramfs(root, join(scratch, `out${variant}.img`), 1_700_000_000);
      digests.push(await sha256OfFile(join(scratch, `out${variant}.img`)));
    }
    expect(digests[0]).toBe(digests[1]);
  });

  it('unpacks to the tree it was made from, executables kept executable, owned by root', () => {
    const root = join(scratch, 'roundtrip');
    makeTree(root, 0);
    const image = join(scratch, 'roundtrip.img');
    writeInitramfs(root, image, 1_700_000_000);
    const listing = execFileSync('sh', ['-c', `gzip -dc "${image}" | cpio -itv --quiet`]).toString('utf8');
    expect(listing).toMatch(/-rwxr-xr-x\s+1 root\s+root\s+\d+ .* init/);
    expect(listing).toMatch(/-rw-r--r--\s+1 root\s+root\s+\d+ .* etc\/hosts/);
    expect(listing).toMatch(/lrwxrwxrwx .* bin\/sh -> tool/);
    const out = join(scratch, 'unpacked');
    mkdirSync(out);
    execFileSync('sh', ['-c', `gzip -dc "${image}" | cpio -idm --quiet`], { cwd: out });
    expect(readFileSync(join(out, 'init'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(lstatSync(join(out, 'init')).mtimeMs).toBe(1_700_000_000_000);
  });
});
