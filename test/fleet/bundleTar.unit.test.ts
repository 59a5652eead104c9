import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { readTar, writeTar, type TarEntry } from '../../schemas/fleet/bundleTar.ts';
import { buildModuleBundle } from '../../schemas/fleet/buildModuleBundle.ts';
import { bundleOf, files, newPublisher, source } from './bundleFixture.ts';

const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,40}$/).filter((s) => s !== '.' && s !== '..');
const path = fc
  .array(segment, { minLength: 1, maxLength: 6 })
  .map((s) => s.join('/'))
  .filter((p) => p.length <= 250);
const entry: fc.Arbitrary<TarEntry> = fc.record({
  path,
  kind: fc.constant('file' as const),
  mode: fc.integer({ min: 0, max: 0o777 }),
  data: fc.uint8Array({ maxLength: 1_500 }),
});

describe('the bundle tar codec', () => {
  test.prop([fc.uniqueArray(entry, { selector: (e) => e.path, maxLength: 6 })])('reads back exactly what it wrote', (entries) => {
    let bytes: Uint8Array;
    try {
      bytes = writeTar(entries);
    } catch {
      // A path ustar cannot split (a last segment over 100 characters, or nowhere to cut) is refused, never written.
      return;
    }
    expect(readTar(bytes)).toEqual(entries.map((e) => ({ ...e, data: Uint8Array.from(e.data) })));
  });

  it('writes what tar itself unpacks, files and modes as listed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bc-tar-'));
    try {
      writeFileSync(join(dir, 'b.tar'), bundleOf(newPublisher()));
      execFileSync('tar', ['-xf', join(dir, 'b.tar'), '-C', dir]);
      expect(readFileSync(join(dir, 'files', 'etc', 'resolver.conf'), 'utf8')).toBe('listen 127.0.0.53\n');
      expect(statSync(join(dir, 'files', 'bin', 'resolver')).mode & 0o777).toBe(0o755);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.prop([fc.shuffledSubarray(files(), { minLength: 2, maxLength: 2 })])('packs the same bytes whatever order the files come in', (shuffled) => {
    const signer = newPublisher();
    expect(Buffer.from(buildModuleBundle(source(), shuffled, signer)).equals(Buffer.from(buildModuleBundle(source(), files(), signer)))).toBe(true);
  });
});
