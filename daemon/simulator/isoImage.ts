/** Why an image could not be read: it is not ISO 9660, or a field points outside the image. */
export class IsoImageError extends Error {
  override name = 'IsoImageError';
  readonly code = 'ISO_MALFORMED' as const;
}

const FIRST_DESCRIPTOR_SECTOR = 16;
const DESCRIPTOR_SIZE = 2048;
const FLAG_DIRECTORY = 0x02;
const FLAG_MULTI_EXTENT = 0x80;

function slice(bytes: Uint8Array, start: number, length: number, what: string): Uint8Array {
  if (start < 0 || length < 0 || start + length > bytes.length) throw new IsoImageError(`${what} lies outside the image`);
  return bytes.subarray(start, start + length);
}

/** `USER-DATA.;1` → `USER-DATA`, `user-data;1` → `user-data`: the version suffix and an empty extension go. */
function plainName(identifier: string): string {
  return identifier.replace(/;\d+$/, '').replace(/\.$/, '');
}

/**
 * Reads the files of an ISO 9660 image's root directory, as a BMC-booted installer sees its seed CD. Written from
 * ECMA-119 rather than from our writer: volume descriptors are walked until the primary one (type 1), the logical
 * block size is taken from it, directory records are walked sector by sector (a zero length byte means "continue at
 * the next sector"), multi-extent files are joined, and `;1` versions are stripped. Subdirectories are skipped.
 */
export function readIso9660(bytes: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pvd: number | undefined;
  for (let sector = FIRST_DESCRIPTOR_SECTOR; ; sector++) {
    const at = sector * DESCRIPTOR_SIZE;
    const magic = Buffer.from(slice(bytes, at + 1, 5, 'a volume descriptor')).toString('latin1');
    if (magic !== 'CD001') throw new IsoImageError(`no ISO 9660 volume descriptor at sector ${sector}`);
    const type = bytes[at]!;
    if (type === 1) {
      pvd = at;
      break;
    }
    if (type === 255) break;
  }
  if (pvd === undefined) throw new IsoImageError('the image has no primary volume descriptor');
  const blockSize = view.getUint16(pvd + 128, true);
  if (blockSize === 0 || (blockSize & (blockSize - 1)) !== 0) throw new IsoImageError(`logical block size ${blockSize} is not a power of two`);
  const rootExtent = view.getUint32(pvd + 156 + 2, true);
  const rootSize = view.getUint32(pvd + 156 + 10, true);
  const root = slice(bytes, rootExtent * blockSize, rootSize, 'the root directory');

  const files = new Map<string, Uint8Array>();
  let pending: { name: string; parts: Uint8Array[] } | undefined;
  for (let offset = 0; offset < root.length;) {
    const length = root[offset]!;
    if (length === 0) {
      // Records never cross a sector boundary; the rest of this sector is padding.
      offset = (Math.floor(offset / blockSize) + 1) * blockSize;
      continue;
    }
    if (length < 34 || offset + length > root.length) throw new IsoImageError(`directory record at ${offset} is malformed`);
    const record = root.subarray(offset, offset + length);
    const recordView = new DataView(record.buffer, record.byteOffset, record.byteLength);
    const extent = recordView.getUint32(2, true);
    const size = recordView.getUint32(10, true);
    const flags = record[25]!;
    const idLength = record[32]!;
    if (33 + idLength > length) throw new IsoImageError(`directory record at ${offset} has a longer identifier than itself`);
    const id = record.subarray(33, 33 + idLength);
    offset += length;
    const special = idLength === 1 && (id[0] === 0 || id[0] === 1);
    if (special || flags & FLAG_DIRECTORY) continue;
    const name = plainName(Buffer.from(id).toString('latin1'));
    const data = size === 0 ? new Uint8Array(0) : slice(bytes, extent * blockSize, size, `file ${name}`);
    const parts = pending?.name === name ? [...pending.parts, data] : [data];
    if (flags & FLAG_MULTI_EXTENT) {
      pending = { name, parts };
      continue;
    }
    pending = undefined;
    files.set(name, parts.length === 1 ? parts[0]! : new Uint8Array(Buffer.concat(parts)));
  }
  return files;
}
