/** Why an image could not be built. */
export const Iso9660ErrorCodes = {
  ISO_INVALID_NAME: 'A file name is empty, too long, or has a character the root directory cannot hold',
  ISO_DUPLICATE_NAME: 'Two files have the same name',
  ISO_INVALID_VOLUME_ID: 'The volume id is empty, longer than 32 bytes, or not printable ASCII',
} as const;
export type Iso9660ErrorCode = keyof typeof Iso9660ErrorCodes;

/** Thrown by {@link buildIso9660} for input it cannot write; match on `code`. */
export class Iso9660Error extends Error {
  override name = 'Iso9660Error';
  constructor(
    readonly code: Iso9660ErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** One file of the image's root directory. A string is written as UTF-8. */
export interface Iso9660File {
  name: string;
  content: string | Uint8Array;
}

/** What {@link buildIso9660} writes. */
export interface Iso9660Spec {
  /**
   * The volume label (at most 32 printable ASCII bytes), kept as given: cloud-init's NoCloud source looks for a
   * volume labelled `cidata` (or `CIDATA`), so the case must survive.
   */
  volumeId: string;
  /** Files of the root directory; subdirectories are not supported. */
  files: readonly Iso9660File[];
  /** The timestamp of every date field. Default 2000-01-01T00:00:00Z, so the same input gives the same bytes. */
  date?: Date;
}

const SECTOR = 2048;
/** Sector 16: the system area (0-15) is left zero, as on any non-hybrid image. */
const PVD_SECTOR = 16;
const PATH_TABLE_L_SECTOR = 18;
const PATH_TABLE_M_SECTOR = 19;
const ROOT_SECTOR = 20;
const DEFAULT_DATE = new Date(Date.UTC(2000, 0, 1));
/** 255 bytes per directory record minus its 33 fixed bytes and the padding byte. */
const MAX_NAME_BYTES = 200;

function both16(view: DataView, offset: number, value: number): void {
  view.setUint16(offset, value, true);
  view.setUint16(offset + 2, value, false);
}

function both32(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, value, true);
  view.setUint32(offset + 4, value, false);
}

function ascii(bytes: Uint8Array, offset: number, length: number, text: string): void {
  bytes.fill(0x20, offset, offset + length);
  for (let i = 0; i < Math.min(text.length, length); i++) bytes[offset + i] = text.charCodeAt(i);
}

/** The 17-byte "YYYYMMDDHHMMSScc" + GMT offset form of the volume descriptor's dates (UTC). */
function volumeDate(bytes: Uint8Array, offset: number, date: Date | undefined): void {
  if (!date) {
    ascii(bytes, offset, 16, '0'.repeat(16));
    bytes[offset + 16] = 0;
    return;
  }
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const text = `${p(date.getUTCFullYear(), 4)}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}00`;
  ascii(bytes, offset, 16, text);
  bytes[offset + 16] = 0;
}

/** Writes a directory record at `offset` and returns its length. */
function directoryRecord(bytes: Uint8Array, offset: number, record: { id: Uint8Array; sector: number; size: number; directory: boolean; date: Date }): number {
  const length = 33 + record.id.length + (record.id.length % 2 === 0 ? 1 : 0);
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, length);
  bytes[offset] = length;
  both32(view, 2, record.sector);
  both32(view, 10, record.size);
  const d = record.date;
  bytes.set([d.getUTCFullYear() - 1900, d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), 0], offset + 18);
  bytes[offset + 25] = record.directory ? 0x02 : 0x00;
  both16(view, 28, 1);
  bytes[offset + 32] = record.id.length;
  bytes.set(record.id, offset + 33);
  return length;
}

/** `name;1`: the version suffix every ISO 9660 reader expects and strips. */
function fileIdentifier(name: string): Uint8Array {
  // Printable ASCII without the separators ISO 9660 gives a meaning (`/` paths, `;` versions).
  if (name === '' || name === '.' || name === '..' || !/^[\x21-\x7e]+$/.test(name) || /[/;]/.test(name) || name.length > MAX_NAME_BYTES) {
    throw new Iso9660Error('ISO_INVALID_NAME', `file name ${JSON.stringify(name)} cannot be written to the root directory`);
  }
  return new TextEncoder().encode(`${name};1`);
}

const sectorsFor = (size: number) => Math.ceil(size / SECTOR);

/**
 * Builds a minimal ISO 9660 (ECMA-119) image: 2048-byte sectors, an empty 16-sector system area, a primary volume
 * descriptor, the set terminator, L and M path tables, and one root directory holding `files` (each `name;1`).
 * Enough for a NoCloud / autoinstall seed (`user-data`, `meta-data`) on a BMC's virtual CD.
 *
 * Limitations: no Rock Ridge or Joliet, no subdirectories, names of printable ASCII only. Names are written as
 * given rather than folded to ISO's upper-case d-characters ("level 3, relaxed"): Linux's isofs shows them as
 * `user-data`, but a strict reader may refuse lower case or `-`. The output is deterministic: files are sorted by
 * name, and every date is `spec.date` (default 2000-01-01T00:00:00Z).
 *
 * @throws Iso9660Error `ISO_INVALID_NAME`, `ISO_DUPLICATE_NAME` or `ISO_INVALID_VOLUME_ID`.
 */
export function buildIso9660(spec: Iso9660Spec): Uint8Array {
  if (spec.volumeId === '' || spec.volumeId.length > 32 || !/^[\x20-\x7e]+$/.test(spec.volumeId)) {
    throw new Iso9660Error('ISO_INVALID_VOLUME_ID', 'volumeId must be 1 to 32 printable ASCII characters');
  }
  const date = spec.date ?? DEFAULT_DATE;
  const files = spec.files
    .map((f) => ({ id: fileIdentifier(f.name), name: f.name, data: typeof f.content === 'string' ? new TextEncoder().encode(f.content) : f.content }))
    .sort((a, b) => Buffer.compare(a.id, b.id));
  for (let i = 1; i < files.length; i++) {
    if (files[i]!.name === files[i - 1]!.name) throw new Iso9660Error('ISO_DUPLICATE_NAME', `file ${files[i]!.name} is given twice`);
  }

  // Directory records may not cross a sector boundary: each one that would is moved to the next sector.
  const recordLength = (id: Uint8Array) => 33 + id.length + (id.length % 2 === 0 ? 1 : 0);
  const recordOffsets: number[] = [];
  let used = 2 * 34;
  for (const file of files) {
    const length = recordLength(file.id);
    if ((used % SECTOR) + length > SECTOR) used += SECTOR - (used % SECTOR);
    recordOffsets.push(used);
    used += length;
  }
  const rootSize = sectorsFor(used) * SECTOR;
  let next = ROOT_SECTOR + rootSize / SECTOR;
  const extents = files.map((file) => {
    const sector = file.data.length === 0 ? 0 : next;
    next += sectorsFor(file.data.length);
    return sector;
  });
  const totalSectors = next;

  const image = new Uint8Array(totalSectors * SECTOR);
  const pvd = PVD_SECTOR * SECTOR;
  const view = new DataView(image.buffer);
  image[pvd] = 1;
  ascii(image, pvd + 1, 5, 'CD001');
  image[pvd + 6] = 1;
  ascii(image, pvd + 8, 32, 'LINUX');
  ascii(image, pvd + 40, 32, spec.volumeId);
  both32(view, pvd + 80, totalSectors);
  both16(view, pvd + 120, 1);
  both16(view, pvd + 124, 1);
  both16(view, pvd + 128, SECTOR);
  both32(view, pvd + 132, 10);
  view.setUint32(pvd + 140, PATH_TABLE_L_SECTOR, true);
  view.setUint32(pvd + 148, PATH_TABLE_M_SECTOR, false);
  directoryRecord(image, pvd + 156, { id: Uint8Array.of(0), sector: ROOT_SECTOR, size: rootSize, directory: true, date });
  for (const [offset, length] of [
    [190, 128],
    [318, 128],
    [446, 128],
    [574, 128],
    [702, 37],
    [739, 37],
    [776, 37],
  ] as const)
    ascii(image, pvd + offset, length, '');
  ascii(image, pvd + 574, 128, 'BETTER COMPUTE');
  volumeDate(image, pvd + 813, date);
  volumeDate(image, pvd + 830, date);
  volumeDate(image, pvd + 847, undefined);
  volumeDate(image, pvd + 864, date);
  image[pvd + 881] = 1;

  const terminator = (PVD_SECTOR + 1) * SECTOR;
  image[terminator] = 255;
  ascii(image, terminator + 1, 5, 'CD001');
  image[terminator + 6] = 1;

  // One path table entry (the root, parent 1, identifier 0x00 plus a pad byte), once little- and once big-endian.
  for (const [sector, littleEndian] of [
    [PATH_TABLE_L_SECTOR, true],
    [PATH_TABLE_M_SECTOR, false],
  ] as const) {
    const at = sector * SECTOR;
    image[at] = 1;
    view.setUint32(at + 2, ROOT_SECTOR, littleEndian);
    view.setUint16(at + 6, 1, littleEndian);
  }

  const root = ROOT_SECTOR * SECTOR;
  directoryRecord(image, root, { id: Uint8Array.of(0), sector: ROOT_SECTOR, size: rootSize, directory: true, date });
  directoryRecord(image, root + 34, { id: Uint8Array.of(1), sector: ROOT_SECTOR, size: rootSize, directory: true, date });
  files.forEach((file, i) => {
    directoryRecord(image, root + recordOffsets[i]!, { id: file.id, sector: extents[i]!, size: file.data.length, directory: false, date });
    image.set(file.data, extents[i]! * SECTOR);
  });
  return image;
}
