import { PxeError } from './pxeErrors.ts';

/** TFTP opcodes (RFC 1350 §5, OACK from RFC 2347). */
export const TftpOp = { RRQ: 1, WRQ: 2, DATA: 3, ACK: 4, ERROR: 5, OACK: 6 } as const;

/** TFTP error codes (RFC 1350 §5; 8 from RFC 2347). */
export const TftpErrorCode = {
  NotDefined: 0,
  FileNotFound: 1,
  AccessViolation: 2,
  IllegalOperation: 4,
  UnknownTid: 5,
  OptionRefused: 8,
} as const;

export type TftpPacket =
  | { op: 1 | 2; filename: string; mode: string; options: Map<string, string> }
  | { op: 3; block: number; data: Buffer }
  | { op: 4; block: number }
  | { op: 5; code: number; message: string }
  | { op: 6; options: Map<string, string> };

const malformed = (why: string) => new PxeError('TFTP_MALFORMED', why);

/** NUL-terminated strings from `at` to the end; a missing final NUL is malformed. */
function strings(buf: Buffer, at: number): string[] {
  if (buf.length <= at || buf[buf.length - 1] !== 0) throw malformed('strings are not NUL-terminated');
  return buf
    .subarray(at, buf.length - 1)
    .toString('latin1')
    .split('\0');
}

function optionPairs(words: readonly string[]): Map<string, string> {
  if (words.length % 2 !== 0) throw malformed('an option has no value');
  const options = new Map<string, string>();
  for (let i = 0; i < words.length; i += 2) {
    const name = words[i]!.toLowerCase();
    if (name === '' || options.has(name)) throw malformed(`option "${name}" is empty or repeated`);
    options.set(name, words[i + 1]!);
  }
  return options;
}

/** Parses one datagram; anything else than a well-formed TFTP packet throws `TFTP_MALFORMED`. */
export function parseTftpPacket(buf: Buffer): TftpPacket {
  if (buf.length < 4) throw malformed(`${buf.length} bytes is shorter than any TFTP packet`);
  const op = buf.readUInt16BE(0);
  switch (op) {
    case TftpOp.RRQ:
    case TftpOp.WRQ: {
      const [filename, mode, ...rest] = strings(buf, 2);
      if (!filename || !mode) throw malformed('request without file name or mode');
      return { op, filename, mode: mode.toLowerCase(), options: optionPairs(rest) };
    }
    case TftpOp.DATA:
      return { op, block: buf.readUInt16BE(2), data: buf.subarray(4) };
    case TftpOp.ACK:
      if (buf.length !== 4) throw malformed('ACK of the wrong length');
      return { op, block: buf.readUInt16BE(2) };
    case TftpOp.ERROR:
      return { op, code: buf.readUInt16BE(2), message: buf.length > 4 ? (strings(buf, 4)[0] ?? '') : '' };
    case TftpOp.OACK:
      return { op, options: optionPairs(strings(buf, 2)) };
    default:
      throw malformed(`opcode ${op} is not TFTP`);
  }
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff);
  return b;
};
const z = (s: string) => Buffer.from(`${s}\0`, 'latin1');

export function encodeTftpPacket(packet: TftpPacket): Buffer {
  switch (packet.op) {
    case TftpOp.RRQ:
    case TftpOp.WRQ:
      return Buffer.concat([u16(packet.op), z(packet.filename), z(packet.mode), ...[...packet.options].flatMap(([k, v]) => [z(k), z(v)])]);
    case TftpOp.DATA:
      return Buffer.concat([u16(packet.op), u16(packet.block), packet.data]);
    case TftpOp.ACK:
      return Buffer.concat([u16(packet.op), u16(packet.block)]);
    case TftpOp.ERROR:
      return Buffer.concat([u16(packet.op), u16(packet.code), z(packet.message)]);
    case TftpOp.OACK:
      return Buffer.concat([u16(packet.op), ...[...packet.options].flatMap(([k, v]) => [z(k), z(v)])]);
  }
}
