/**
 * The tar dialect of module bundles (docs/modules.md): POSIX ustar, regular files and folders only, every header in the
 * one canonical form this codec writes (owner 0:0, mtime 0, no user or group names, octal fields zero-padded), data
 * padded with zeros, then exactly two zero blocks and nothing else. Any tar tool lists and unpacks it; the reader
 * refuses anything else, so a bundle has exactly one byte form and no byte of it escapes verification.
 */

const BLOCK = 512;

export interface TarEntry {
  /** The path in the archive (`manifest.json`, `files/bin/tool`), without a trailing `/` for folders. */
  readonly path: string;
  readonly kind: 'file' | 'folder';
  readonly mode: number;
  readonly data: Uint8Array;
}

/** Why the reader refused: `unsafe` (absolute path, `..`, a link) or `malformed` (anything else it does not read). */
export class TarRefusal extends Error {
  constructor(
    readonly reason: 'unsafe' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

const ascii = new TextEncoder();
const text = new TextDecoder('latin1');

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function splitPath(path: string): { name: string; prefix: string } {
  if (path.length <= 100) return { name: path, prefix: '' };
  const cut = path.lastIndexOf('/', 155);
  if (cut <= 0 || path.length - cut - 1 > 100) throw new TarRefusal('malformed', `path too long for ustar: ${path}`);
  return { name: path.slice(cut + 1), prefix: path.slice(0, cut) };
}

function header(entry: Pick<TarEntry, 'path' | 'kind' | 'mode'>, size: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (offset: number, value: string) => block.set(ascii.encode(value), offset);
  const { name, prefix } = splitPath(entry.kind === 'folder' ? `${entry.path}/` : entry.path);
  put(0, name);
  put(100, octal(entry.mode, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(0, 12));
  put(148, '        ');
  put(156, entry.kind === 'folder' ? '5' : '0');
  put(257, 'ustar\0');
  put(263, '00');
  put(345, prefix);
  const sum = block.reduce((a, b) => a + b, 0);
  put(148, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** The canonical tarball of `entries`, in the order given. */
export function writeTar(entries: readonly TarEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const size = e.kind === 'folder' ? 0 : e.data.byteLength;
    parts.push(header(e, size));
    if (size > 0) {
      const padded = new Uint8Array(Math.ceil(size / BLOCK) * BLOCK);
      padded.set(e.data);
      parts.push(padded);
    }
  }
  parts.push(new Uint8Array(2 * BLOCK));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const field = (block: Uint8Array, offset: number, width: number) => text.decode(block.subarray(offset, offset + width)).replace(/\0.*$/s, '');

function readOctal(block: Uint8Array, offset: number, width: number): number {
  const raw = field(block, offset, width).trim();
  if (!/^[0-7]{1,11}$/.test(raw)) throw new TarRefusal('malformed', `header field at ${offset} is not octal`);
  return parseInt(raw, 8);
}

function unsafePath(path: string): boolean {
  return path.startsWith('/') || path.includes('\\') || path.split('/').some((s) => s === '..' || s === '.' || s === '');
}

const isZero = (bytes: Uint8Array) => bytes.every((b) => b === 0);

/** The entries of a canonical bundle tarball; throws `TarRefusal` for anything else. */
export function readTar(bytes: Uint8Array): TarEntry[] {
  if (bytes.byteLength % BLOCK !== 0 || bytes.byteLength < 2 * BLOCK) throw new TarRefusal('malformed', 'not a whole number of tar blocks');
  const entries: TarEntry[] = [];
  let at = 0;
  for (;;) {
    const block = bytes.subarray(at, at + BLOCK);
    if (isZero(block)) {
      if (at + 2 * BLOCK !== bytes.byteLength || !isZero(bytes.subarray(at))) throw new TarRefusal('malformed', 'bytes after the end of the archive');
      return entries;
    }
    const type = String.fromCharCode(block[156]!);
    const rawName = field(block, 0, 100);
    const prefix = field(block, 345, 155);
    const fullName = prefix ? `${prefix}/${rawName}` : rawName;
    // Links and traversal are refused as unsafe before any other check: they are what an attack looks like.
    if (type === '1' || type === '2') throw new TarRefusal('unsafe', `${fullName} is a link`);
    if (type !== '0' && type !== '5') throw new TarRefusal('malformed', `${fullName}: entry type ${JSON.stringify(type)} is not a file or folder`);
    const kind = type === '5' ? 'folder' : 'file';
    const path = kind === 'folder' ? fullName.replace(/\/$/, '') : fullName;
    if (unsafePath(path)) throw new TarRefusal('unsafe', `${fullName} escapes the bundle`);
    const mode = readOctal(block, 100, 8);
    const size = readOctal(block, 124, 12);
    if (kind === 'folder' && size !== 0) throw new TarRefusal('malformed', `${fullName}: a folder with data`);
    const canonical = header({ path, kind, mode }, size);
    if (!canonical.every((b, i) => b === block[i]))
      throw new TarRefusal('malformed', `${fullName}: header is not in canonical form (or its checksum is wrong)`);
    const dataEnd = at + BLOCK + size;
    const paddedEnd = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (paddedEnd + 2 * BLOCK > bytes.byteLength) throw new TarRefusal('malformed', `${fullName}: data runs past the archive`);
    if (!isZero(bytes.subarray(dataEnd, paddedEnd))) throw new TarRefusal('malformed', `${fullName}: padding is not zero`);
    entries.push({ path, kind, mode, data: bytes.slice(at + BLOCK, dataEnd) });
    at = paddedEnd;
  }
}
