import { PxeError } from './pxeErrors.ts';

/** DHCP option numbers the boot path reads or writes (RFC 2132, RFC 4578, RFC 3004). */
export const DhcpOption = {
  SubnetMask: 1,
  Router: 3,
  DnsServers: 6,
  Hostname: 12,
  RequestedAddress: 50,
  LeaseTime: 51,
  Overload: 52,
  MessageType: 53,
  ServerId: 54,
  ParameterList: 55,
  RenewalTime: 58,
  RebindingTime: 59,
  VendorClass: 60,
  ClientId: 61,
  TftpServerName: 66,
  BootfileName: 67,
  UserClass: 77,
  ClientArch: 93,
  ClientNdi: 94,
  ClientUuid: 97,
  VendorOptions: 43,
  End: 255,
  Pad: 0,
} as const;

export const DhcpMessageType = { Discover: 1, Offer: 2, Request: 3, Decline: 4, Ack: 5, Nak: 6, Release: 7, Inform: 8 } as const;

/** A BOOTP/DHCP message (RFC 2131 §2) with its options by number; repeated options are joined (RFC 3396). */
export interface DhcpPacket {
  op: 1 | 2;
  xid: number;
  secs: number;
  flags: number;
  ciaddr: string;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  /** Client hardware address, lower-case `aa:bb:cc:dd:ee:ff`. */
  mac: string;
  sname: string;
  file: string;
  options: Map<number, Buffer>;
}

const MAGIC = 0x63825363;
const HEADER = 236;
/** BOOTP's minimum message size: some PXE ROMs drop shorter replies. */
const MIN_REPLY = 300;

const malformed = (why: string) => new PxeError('DHCP_MALFORMED', why);
const ipAt = (buf: Buffer, at: number) => `${buf[at]}.${buf[at + 1]}.${buf[at + 2]}.${buf[at + 3]}`;
const cString = (buf: Buffer) => {
  const nul = buf.indexOf(0);
  return buf.subarray(0, nul < 0 ? buf.length : nul).toString('latin1');
};

function readOptions(buf: Buffer, into: Map<number, Buffer>): void {
  let at = 0;
  while (at < buf.length) {
    const code = buf[at]!;
    if (code === DhcpOption.Pad) {
      at += 1;
      continue;
    }
    if (code === DhcpOption.End) return;
    if (at + 1 >= buf.length) throw malformed(`option ${code} has no length`);
    const len = buf[at + 1]!;
    if (at + 2 + len > buf.length) throw malformed(`option ${code} runs past the end of the message`);
    const value = buf.subarray(at + 2, at + 2 + len);
    const earlier = into.get(code);
    into.set(code, earlier ? Buffer.concat([earlier, value]) : Buffer.from(value));
    at += 2 + len;
  }
  throw malformed('options have no end marker');
}

/** Parses a datagram; anything that is not a well-formed Ethernet BOOTP/DHCP message throws `DHCP_MALFORMED`. */
export function parseDhcpPacket(buf: Buffer): DhcpPacket {
  if (buf.length < HEADER + 4) throw malformed(`${buf.length} bytes is shorter than a DHCP message`);
  const op = buf[0];
  if (op !== 1 && op !== 2) throw malformed(`op ${op} is neither BOOTREQUEST nor BOOTREPLY`);
  if (buf[1] !== 1 || buf[2] !== 6) throw malformed(`hardware type ${buf[1]}/${buf[2]} is not Ethernet`);
  if (buf.readUInt32BE(HEADER) !== MAGIC) throw malformed('no DHCP magic cookie');
  const options = new Map<number, Buffer>();
  readOptions(buf.subarray(HEADER + 4), options);
  const sname = buf.subarray(44, 108);
  const file = buf.subarray(108, 236);
  // Option overload (RFC 2132 §9.3): the file and sname fields carry more options instead of names.
  const overload = options.get(DhcpOption.Overload)?.[0] ?? 0;
  if (overload & 1) readOptions(file, options);
  if (overload & 2) readOptions(sname, options);
  return {
    op,
    xid: buf.readUInt32BE(4),
    secs: buf.readUInt16BE(8),
    flags: buf.readUInt16BE(10),
    ciaddr: ipAt(buf, 12),
    yiaddr: ipAt(buf, 16),
    siaddr: ipAt(buf, 20),
    giaddr: ipAt(buf, 24),
    mac: [...buf.subarray(28, 34)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    sname: overload & 2 ? '' : cString(sname),
    file: overload & 1 ? '' : cString(file),
    options,
  };
}

function writeIp(buf: Buffer, at: number, ip: string): void {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new RangeError(`${ip} is not an IPv4 address`);
  parts.forEach((p, i) => (buf[at + i] = p));
}

/** Encodes a message; options longer than 255 bytes are split (RFC 3396); the result is at least 300 bytes. */
export function encodeDhcpPacket(packet: DhcpPacket): Buffer {
  const head = Buffer.alloc(HEADER + 4);
  head[0] = packet.op;
  head[1] = 1;
  head[2] = 6;
  head.writeUInt32BE(packet.xid >>> 0, 4);
  head.writeUInt16BE(packet.secs, 8);
  head.writeUInt16BE(packet.flags, 10);
  writeIp(head, 12, packet.ciaddr);
  writeIp(head, 16, packet.yiaddr);
  writeIp(head, 20, packet.siaddr);
  writeIp(head, 24, packet.giaddr);
  Buffer.from(packet.mac.split(':').map((h) => parseInt(h, 16))).copy(head, 28);
  head.write(packet.sname.slice(0, 63), 44, 'latin1');
  head.write(packet.file.slice(0, 127), 108, 'latin1');
  head.writeUInt32BE(MAGIC, HEADER);
  const parts: Buffer[] = [head];
  // Message type first: some clients look for it there.
  const codes = [...packet.options.keys()].sort((a, b) => (a === DhcpOption.MessageType ? -1 : b === DhcpOption.MessageType ? 1 : 0));
  for (const code of codes) {
    const value = packet.options.get(code)!;
    for (let at = 0; at < value.length || at === 0; at += 255) {
      const chunk = value.subarray(at, at + 255);
      parts.push(Buffer.from([code, chunk.length]), chunk);
      if (value.length === 0) break;
    }
  }
  parts.push(Buffer.from([DhcpOption.End]));
  const out = Buffer.concat(parts);
  return out.length >= MIN_REPLY ? out : Buffer.concat([out, Buffer.alloc(MIN_REPLY - out.length)]);
}

/** The DHCP message type (option 53), or undefined for plain BOOTP. */
export const messageTypeOf = (packet: DhcpPacket) => packet.options.get(DhcpOption.MessageType)?.[0];

/** Option 60 as text (`PXEClient:Arch:00000:UNDI:002001` for a PXE ROM). */
export const vendorClassOf = (packet: DhcpPacket) => packet.options.get(DhcpOption.VendorClass)?.toString('latin1');

/**
 * Option 77's user classes. RFC 3004 frames each class with a length byte; iPXE (and many ROMs) send the bare
 * string, so a value whose framing does not add up is one class.
 */
export function userClassesOf(packet: DhcpPacket): string[] {
  const raw = packet.options.get(DhcpOption.UserClass);
  if (!raw || raw.length === 0) return [];
  const framed: string[] = [];
  let at = 0;
  while (at < raw.length) {
    const len = raw[at]!;
    if (len === 0 || at + 1 + len > raw.length) return [raw.toString('latin1')];
    framed.push(raw.subarray(at + 1, at + 1 + len).toString('latin1'));
    at += 1 + len;
  }
  return framed;
}

/** Option 93's first architecture (RFC 4578: 0 BIOS, 6 EFI IA32, 7 EFI BC, 9 EFI x86-64), or undefined. */
export function clientArchOf(packet: DhcpPacket): number | undefined {
  const raw = packet.options.get(DhcpOption.ClientArch);
  return raw && raw.length >= 2 ? raw.readUInt16BE(0) : undefined;
}

export const ipOption = (ip: string) => {
  const buf = Buffer.alloc(4);
  writeIp(buf, 0, ip);
  return buf;
};
export const u32Option = (value: number) => {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(value >>> 0);
  return buf;
};
