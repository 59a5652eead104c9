import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIso9660, Iso9660Error } from '../../plugins/sdk/iso9660.ts';
import { readIso9660 } from '../../daemon/simulator/isoImage.ts';
import { tempDir } from '../support/natsServer.ts';

const userData = '#cloud-config\nautoinstall:\n  version: 1\n';
const seed = () =>
  buildIso9660({
    volumeId: 'cidata',
    files: [
      { name: 'user-data', content: userData },
      { name: 'meta-data', content: '' },
    ],
  });

const le32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const be32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, false);
const le16 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint16(at, true);
const be16 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint16(at, false);
const text = (b: Uint8Array, at: number, length: number) => Buffer.from(b.subarray(at, at + length)).toString('latin1');

/** The fixed fields of ECMA-119 section 8.4 (PVD) and 9.1 (directory record), by absolute offset. */
const PVD = 0x8000;

describe('buildIso9660', () => {
  it('writes the primary volume descriptor at the ECMA-119 offsets with both-endian fields', () => {
    const iso = seed();
    expect(iso.length % 2048).toBe(0);
    expect(iso.subarray(0, 16 * 2048).every((b) => b === 0)).toBe(true);
    expect(iso[PVD]).toBe(1);
    expect(text(iso, 0x8001, 5)).toBe('CD001');
    expect(iso[PVD + 6]).toBe(1);
    expect(text(iso, PVD + 40, 32)).toBe('cidata'.padEnd(32, ' '));
    // Volume space size (8.4.8), both halves.
    expect(le32(iso, PVD + 80)).toBe(iso.length / 2048);
    expect(be32(iso, PVD + 84)).toBe(iso.length / 2048);
    expect([le16(iso, PVD + 120), be16(iso, PVD + 122), le16(iso, PVD + 124), be16(iso, PVD + 126)]).toEqual([1, 1, 1, 1]);
    expect([le16(iso, PVD + 128), be16(iso, PVD + 130)]).toEqual([2048, 2048]);
    expect(iso[PVD + 881]).toBe(1);
    // The set terminator follows in sector 17.
    expect([iso[0x8800], text(iso, 0x8801, 5)]).toEqual([255, 'CD001']);
  });

  it('points the PVD at a root directory record and L/M path tables that agree', () => {
    const iso = seed();
    const rootRecord = PVD + 156;
    expect(iso[rootRecord]).toBe(34);
    const rootSector = le32(iso, rootRecord + 2);
    expect(be32(iso, rootRecord + 6)).toBe(rootSector);
    expect(le32(iso, rootRecord + 10)).toBe(2048);
    expect(be32(iso, rootRecord + 14)).toBe(2048);
    expect(iso[rootRecord + 25]).toBe(0x02);
    expect([iso[rootRecord + 32], iso[rootRecord + 33]]).toEqual([1, 0]);

    expect([le32(iso, PVD + 132), be32(iso, PVD + 136)]).toEqual([10, 10]);
    const l = le32(iso, PVD + 140) * 2048;
    const m = be32(iso, PVD + 148) * 2048;
    expect([iso[l], le32(iso, l + 2), le16(iso, l + 6), iso[l + 8]]).toEqual([1, rootSector, 1, 0]);
    expect([iso[m], be32(iso, m + 2), be16(iso, m + 6), iso[m + 8]]).toEqual([1, rootSector, 1, 0]);

    // The root directory itself: `.`, `..`, then the files sorted by identifier, each with its `;1` version.
    const root = rootSector * 2048;
    expect([iso[root + 32], iso[root + 33], iso[root + 34 + 32], iso[root + 34 + 33]]).toEqual([1, 0, 1, 1]);
    const first = root + 68;
    expect(text(iso, first + 33, iso[first + 32]!)).toBe('meta-data;1');
    expect(le32(iso, first + 10)).toBe(0);
    const second = first + iso[first]!;
    expect(text(iso, second + 33, iso[second + 32]!)).toBe('user-data;1');
    expect(le32(iso, second + 10)).toBe(userData.length);
    expect(text(iso, le32(iso, second + 2) * 2048, userData.length)).toBe(userData);
  });

  it('gives the same bytes for the same input, and dates from the given date', () => {
    expect(Buffer.from(seed()).equals(Buffer.from(seed()))).toBe(true);
    const dated = buildIso9660({ volumeId: 'cidata', files: [], date: new Date('2026-03-04T05:06:07Z') });
    expect(text(dated, PVD + 813, 16)).toBe('2026030405060700');
    expect(Array.from(dated.subarray(PVD + 156 + 18, PVD + 156 + 25))).toEqual([126, 3, 4, 5, 6, 7, 0]);
  });

  it('round-trips through the reader, across directory sectors and for binary content', () => {
    const files = Array.from({ length: 60 }, (_, i) => ({
      name: `file-${String(i).padStart(3, '0')}-${'x'.repeat(20)}`,
      content: Uint8Array.from({ length: i * 100 }, (_, j) => (i + j) % 256),
    }));
    const iso = buildIso9660({ volumeId: 'MANY', files });
    const rootSize = le32(iso, PVD + 156 + 10);
    expect(rootSize).toBeGreaterThan(2048);
    const read = readIso9660(iso);
    expect([...read.keys()].sort()).toEqual(files.map((f) => f.name));
    for (const f of files) expect(Buffer.from(read.get(f.name)!).equals(Buffer.from(f.content))).toBe(true);
    expect(Buffer.from(readIso9660(seed()).get('user-data')!).toString()).toBe(userData);
  });

  it.each([
    [{ volumeId: '', files: [] }, 'ISO_INVALID_VOLUME_ID'],
    [{ volumeId: 'x'.repeat(33), files: [] }, 'ISO_INVALID_VOLUME_ID'],
    [{ volumeId: 'v', files: [{ name: 'a/b', content: '' }] }, 'ISO_INVALID_NAME'],
    [{ volumeId: 'v', files: [{ name: 'a;1', content: '' }] }, 'ISO_INVALID_NAME'],
    [
      {
        volumeId: 'v',
        files: [
          { name: 'a', content: '' },
          { name: 'a', content: 'x' },
        ],
      },
      'ISO_DUPLICATE_NAME',
    ],
  ])('refuses %j with %s', (spec, code) => {
    expect(() => buildIso9660(spec)).toThrow(expect.objectContaining({ code }) as Iso9660Error);
  });

  it('is recognised by file(1) as an ISO 9660 filesystem', () => {
    let magic: string;
    using dir = tempDir('bc-iso-');
    const path = join(dir.path, 'seed.iso');
    writeFileSync(path, seed());
    try {
      magic = execFileSync('file', ['-b', path], { encoding: 'utf8' });
    } catch {
      // file(1) is not installed here: the byte-level checks above stand alone.
      return;
    }
    expect(magic).toMatch(/^ISO 9660 CD-ROM filesystem data 'cidata'/);
  });
});

describe('readIso9660', () => {
  it('reads identifiers with an empty extension and a version, as other writers make them', () => {
    const iso = seed();
    const root = le32(iso, PVD + 156 + 2) * 2048;
    // Rename `user-data;1` (11 bytes) to `USERDATA.;1` (11 bytes) in place, as a strict level-1 writer would.
    const second = root + 68 + iso[root + 68]!;
    iso.set(Buffer.from('USERDATA.;1', 'latin1'), second + 33);
    expect([...readIso9660(iso).keys()].sort()).toEqual(['USERDATA', 'meta-data']);
  });

  it('refuses bytes that are not an ISO 9660 image', () => {
    expect(() => readIso9660(new Uint8Array(40_000))).toThrow(expect.objectContaining({ code: 'ISO_MALFORMED' }));
    expect(() => readIso9660(new Uint8Array(100))).toThrow(expect.objectContaining({ code: 'ISO_MALFORMED' }));
  });
});
