/** Hand-built boot-path datagrams, byte by byte (independent of the encoder under test). */

const ip = (s: string) => s.split('.').map(Number);
const mac = (s: string) => s.split(':').map((h) => parseInt(h, 16));

export interface RequestSpec {
  mac: string;
  type: number;
  xid?: number;
  ciaddr?: string;
  vendorClass?: string;
  /** Raw option 77 bytes (iPXE sends the bare string `iPXE`). */
  userClass?: Buffer;
  arch?: number;
  uuid?: Buffer;
  serverId?: string;
  requestedIp?: string;
  extra?: number[];
}

/** A BOOTREQUEST as a PXE ROM or iPXE sends it. */
export function dhcpRequestBytes(spec: RequestSpec): Buffer {
  const head = Buffer.alloc(240);
  head[0] = 1;
  head[1] = 1;
  head[2] = 6;
  head.writeUInt32BE(spec.xid ?? 0x1234abcd, 4);
  head.writeUInt16BE(0x8000, 10);
  head.set(ip(spec.ciaddr ?? '0.0.0.0'), 12);
  head.set(mac(spec.mac), 28);
  head.set([0x63, 0x82, 0x53, 0x63], 236);
  const opts: number[] = [53, 1, spec.type];
  if (spec.vendorClass) opts.push(60, spec.vendorClass.length, ...Buffer.from(spec.vendorClass));
  if (spec.userClass) opts.push(77, spec.userClass.length, ...spec.userClass);
  if (spec.arch !== undefined) opts.push(93, 2, spec.arch >> 8, spec.arch & 255);
  if (spec.uuid) opts.push(97, spec.uuid.length, ...spec.uuid);
  if (spec.serverId) opts.push(54, 4, ...ip(spec.serverId));
  if (spec.requestedIp) opts.push(50, 4, ...ip(spec.requestedIp));
  opts.push(55, 4, 1, 3, 43, 60, ...(spec.extra ?? []), 255);
  return Buffer.concat([head, Buffer.from(opts)]);
}

export const pxeRomVendorClass = 'PXEClient:Arch:00000:UNDI:002001';
export const uefiVendorClass = 'PXEClient:Arch:00007:UNDI:003016';

/** A TFTP read request with options, as iPXE sends it. */
export function rrqBytes(file: string, options: Record<string, string> = {}, mode = 'octet'): Buffer {
  const words = [file, mode, ...Object.entries(options).flat()];
  return Buffer.concat([Buffer.from([0, 1]), ...words.map((w) => Buffer.from(`${w}\0`, 'latin1'))]);
}
