import { DhcpMessageType, DhcpOption, clientArchOf, ipOption, messageTypeOf, u32Option, userClassesOf, vendorClassOf, type DhcpPacket } from './dhcpPacket.ts';

/** What a booting machine is sent to load: an iPXE binary over TFTP, or (once it runs iPXE) its HTTP script. */
export type BootTarget = { kind: 'tftp'; file: string } | { kind: 'http'; url: string };

/** An address lease this server hands out itself (server mode); absent in proxy mode. */
export interface Lease {
  address: string;
  subnetMask: string;
  router?: string;
  dnsServers?: readonly string[];
  leaseSeconds: number;
}

/** Client system architectures of option 93 (RFC 4578 §2.1) the site has an iPXE binary for. */
export const ClientArch = { BiosX86: 0, EfiBc: 7, EfiX8664: 9 } as const;

/** The iPXE binaries Debian's `ipxe` package ships, by firmware. */
export interface IpxeBinaries {
  bios: string;
  efi: string;
}
export const debianIpxeBinaries: IpxeBinaries = { bios: 'undionly.kpxe', efi: 'ipxe.efi' };

export const isPxeClient = (packet: DhcpPacket) => vendorClassOf(packet)?.startsWith('PXEClient') === true;

/**
 * Where a PXE client goes next: iPXE (user class `iPXE`) fetches its per-machine script over HTTP; firmware PXE
 * (a NIC ROM, UEFI's PXE) first loads iPXE over TFTP, BIOS or EFI build by option 93. Undefined: an architecture
 * the site has no binary for.
 */
export function bootTargetFor(packet: DhcpPacket, binaries: IpxeBinaries, scriptUrl: string): BootTarget | undefined {
  if (userClassesOf(packet).includes('iPXE')) return { kind: 'http', url: scriptUrl };
  const arch = clientArchOf(packet) ?? ClientArch.BiosX86;
  if (arch === ClientArch.BiosX86) return { kind: 'tftp', file: binaries.bios };
  if (arch === ClientArch.EfiBc || arch === ClientArch.EfiX8664) return { kind: 'tftp', file: binaries.efi };
  return undefined;
}

/** PXE vendor options (option 43): discovery control 8 = boot the file named here, no menu, no boot server discovery. */
const pxeVendorOptions = Buffer.from([6, 1, 8, 255]);

/**
 * The reply to a DHCPDISCOVER (→ OFFER) or DHCPREQUEST (→ ACK). Without a lease it is a ProxyDHCP reply (PXE
 * options only, `yiaddr` 0.0.0.0, beside the LAN's own DHCP server); with one it also assigns the address.
 */
export function pxeReply(request: DhcpPacket, input: { serverIp: string; target: BootTarget | undefined; lease?: Lease }): DhcpPacket {
  const type = messageTypeOf(request) === DhcpMessageType.Discover ? DhcpMessageType.Offer : DhcpMessageType.Ack;
  const options = new Map<number, Buffer>([
    [DhcpOption.MessageType, Buffer.from([type])],
    [DhcpOption.ServerId, ipOption(input.serverIp)],
  ]);
  const { lease, target } = input;
  if (lease) {
    options.set(DhcpOption.SubnetMask, ipOption(lease.subnetMask));
    if (lease.router) options.set(DhcpOption.Router, ipOption(lease.router));
    if (lease.dnsServers?.length) options.set(DhcpOption.DnsServers, Buffer.concat(lease.dnsServers.map(ipOption)));
    options.set(DhcpOption.LeaseTime, u32Option(lease.leaseSeconds));
    options.set(DhcpOption.RenewalTime, u32Option(Math.floor(lease.leaseSeconds / 2)));
    options.set(DhcpOption.RebindingTime, u32Option(Math.floor((lease.leaseSeconds * 7) / 8)));
  }
  let file = '';
  if (target && isPxeClient(request)) {
    options.set(DhcpOption.VendorClass, Buffer.from('PXEClient'));
    options.set(DhcpOption.VendorOptions, pxeVendorOptions);
    const uuid = request.options.get(DhcpOption.ClientUuid);
    if (uuid) options.set(DhcpOption.ClientUuid, uuid);
    file = target.kind === 'tftp' ? target.file : target.url;
    if (target.kind === 'tftp') options.set(DhcpOption.TftpServerName, Buffer.from(input.serverIp));
    options.set(DhcpOption.BootfileName, Buffer.from(file));
  }
  return {
    op: 2,
    xid: request.xid,
    secs: 0,
    flags: request.flags,
    ciaddr: request.ciaddr,
    yiaddr: lease?.address ?? '0.0.0.0',
    // iPXE takes a ProxyDHCP answer as PXE options only with both a next-server and a boot file name.
    siaddr: target ? input.serverIp : '0.0.0.0',
    giaddr: request.giaddr,
    mac: request.mac,
    sname: '',
    // The fixed field holds at most 127 bytes; a longer script URL travels in option 67 only.
    file: file.length <= 127 ? file : '',
    options,
  };
}

/** A DHCPNAK: the address the client asked to keep is not the one this server leases it. */
export function dhcpNak(request: DhcpPacket, serverIp: string): DhcpPacket {
  return {
    ...pxeReply(request, { serverIp, target: undefined }),
    options: new Map([
      [DhcpOption.MessageType, Buffer.from([DhcpMessageType.Nak])],
      [DhcpOption.ServerId, ipOption(serverIp)],
    ]),
  };
}
