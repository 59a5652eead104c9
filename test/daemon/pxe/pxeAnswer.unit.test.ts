import { describe, expect, it } from 'vitest';
import { AddressPool } from '../../../daemon/site/pxe/addressPool.ts';
import { DhcpOption, messageTypeOf, parseDhcpPacket } from '../../../daemon/site/pxe/dhcpPacket.ts';
import { bootTargetFor, debianIpxeBinaries, pxeReply } from '../../../daemon/site/pxe/pxeAnswer.ts';
import { dhcpRequestBytes, pxeRomVendorClass, uefiVendorClass } from './pxePackets.ts';

const script = 'http://10.9.0.1:8080/boot/n1/secret.ipxe';
const request = (spec: Parameters<typeof dhcpRequestBytes>[0]) => parseDhcpPacket(dhcpRequestBytes(spec));

describe('PXE boot target', () => {
  it('sends a BIOS PXE ROM the BIOS iPXE binary over TFTP', () => {
    expect(bootTargetFor(request({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass, arch: 0 }), debianIpxeBinaries, script)).toEqual({
      kind: 'tftp',
      file: 'undionly.kpxe',
    });
  });

  it('sends UEFI firmware the EFI iPXE binary', () => {
    for (const arch of [7, 9]) {
      expect(bootTargetFor(request({ mac: '52:54:00:00:00:01', type: 1, vendorClass: uefiVendorClass, arch }), debianIpxeBinaries, script)).toEqual({
        kind: 'tftp',
        file: 'ipxe.efi',
      });
    }
  });

  it('sends a client already running iPXE its HTTP script', () => {
    const ipxe = request({ mac: '52:54:00:00:00:01', type: 1, vendorClass: uefiVendorClass, arch: 7, userClass: Buffer.from('iPXE') });
    expect(bootTargetFor(ipxe, debianIpxeBinaries, script)).toEqual({ kind: 'http', url: script });
  });

  it('has nothing for an architecture without a binary (ARM64 UEFI)', () => {
    expect(bootTargetFor(request({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass, arch: 11 }), debianIpxeBinaries, script)).toBeUndefined();
  });
});

describe('PXE reply', () => {
  const uuid = Buffer.from([0, ...Array.from({ length: 16 }, (_, i) => 0xa0 + i)]);

  it('makes a ProxyDHCP OFFER: no address, PXEClient, boot file, next-server, the client UUID echoed', () => {
    const discover = request({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass, arch: 0, uuid, xid: 77 });
    const offer = pxeReply(discover, { serverIp: '10.9.0.1', target: { kind: 'tftp', file: 'undionly.kpxe' } });
    expect(offer).toMatchObject({ op: 2, xid: 77, yiaddr: '0.0.0.0', siaddr: '10.9.0.1', file: 'undionly.kpxe', mac: '52:54:00:00:00:01' });
    expect(messageTypeOf(offer)).toBe(2);
    expect(offer.options.get(DhcpOption.ServerId)).toEqual(Buffer.from([10, 9, 0, 1]));
    expect(offer.options.get(DhcpOption.VendorClass)?.toString()).toBe('PXEClient');
    expect(offer.options.get(DhcpOption.BootfileName)?.toString()).toBe('undionly.kpxe');
    expect(offer.options.get(DhcpOption.ClientUuid)).toEqual(uuid);
    expect(offer.options.has(DhcpOption.SubnetMask)).toBe(false);
  });

  it('answers a REQUEST with an ACK and keeps a long script URL out of the 128-byte file field', () => {
    const long = `http://10.9.0.1:8080/boot/n1/${'x'.repeat(120)}.ipxe`;
    const req = request({ mac: '52:54:00:00:00:01', type: 3, vendorClass: pxeRomVendorClass, userClass: Buffer.from('iPXE') });
    const ack = pxeReply(req, { serverIp: '10.9.0.1', target: { kind: 'http', url: long } });
    expect(messageTypeOf(ack)).toBe(5);
    expect(ack.file).toBe('');
    expect(ack.options.get(DhcpOption.BootfileName)?.toString()).toBe(long);
  });

  it('names the next-server in an HTTP answer too (regression: iPXE ignored ProxyDHCP ACKs without siaddr)', () => {
    const req = request({ mac: '52:54:00:00:00:01', type: 3, vendorClass: pxeRomVendorClass, userClass: Buffer.from('iPXE') });
    expect(pxeReply(req, { serverIp: '10.9.0.1', target: { kind: 'http', url: script } }).siaddr).toBe('10.9.0.1');
  });

  it('in server mode also assigns the lease with mask, router and times', () => {
    const pool = new AddressPool({ first: '10.9.0.100', last: '10.9.0.101', subnetMask: '255.255.255.0', router: '10.9.0.1', leaseSeconds: 600 });
    const offer = pxeReply(request({ mac: '52:54:00:00:00:01', type: 1 }), {
      serverIp: '10.9.0.1',
      target: undefined,
      lease: pool.leaseFor('52:54:00:00:00:01')!,
    });
    expect(offer.yiaddr).toBe('10.9.0.100');
    expect(offer.options.get(DhcpOption.SubnetMask)).toEqual(Buffer.from([255, 255, 255, 0]));
    expect(offer.options.get(DhcpOption.Router)).toEqual(Buffer.from([10, 9, 0, 1]));
    expect(offer.options.get(DhcpOption.LeaseTime)?.readUInt32BE(0)).toBe(600);
    expect(offer.options.has(DhcpOption.VendorClass)).toBe(false);
  });
});

describe('address pool', () => {
  it('keeps a MAC on its address and runs out rather than double-booking', () => {
    const pool = new AddressPool({ first: '10.9.0.100', last: '10.9.0.101', subnetMask: '255.255.255.0' });
    expect(pool.leaseFor('aa:00:00:00:00:01')?.address).toBe('10.9.0.100');
    expect(pool.leaseFor('aa:00:00:00:00:02')?.address).toBe('10.9.0.101');
    expect(pool.leaseFor('aa:00:00:00:00:01')?.address).toBe('10.9.0.100');
    expect(pool.leaseFor('aa:00:00:00:00:03')).toBeUndefined();
  });
});
