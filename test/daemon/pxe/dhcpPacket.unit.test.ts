import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DhcpMessageType,
  DhcpOption,
  clientArchOf,
  encodeDhcpPacket,
  messageTypeOf,
  parseDhcpPacket,
  userClassesOf,
  vendorClassOf,
} from '../../../daemon/site/pxe/dhcpPacket.ts';
import { PxeError } from '../../../daemon/site/pxe/pxeErrors.ts';
import { dhcpRequestBytes, pxeRomVendorClass } from './pxePackets.ts';

const uuid = Buffer.from([0, ...Array.from({ length: 16 }, (_, i) => i)]);

describe('DHCP packet parsing', () => {
  it('reads a PXE ROM DISCOVER: MAC, type, vendor class, architecture, UUID', () => {
    const packet = parseDhcpPacket(dhcpRequestBytes({ mac: '52:54:00:AB:cd:01', type: 1, vendorClass: pxeRomVendorClass, arch: 0, uuid }));
    expect(packet.op).toBe(1);
    expect(packet.xid).toBe(0x1234abcd);
    expect(packet.mac).toBe('52:54:00:ab:cd:01');
    expect(messageTypeOf(packet)).toBe(DhcpMessageType.Discover);
    expect(vendorClassOf(packet)).toBe(pxeRomVendorClass);
    expect(clientArchOf(packet)).toBe(0);
    expect(packet.options.get(DhcpOption.ClientUuid)).toEqual(uuid);
  });

  it('reads option 77 framed (RFC 3004) and bare (iPXE) alike', () => {
    const bare = parseDhcpPacket(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, userClass: Buffer.from('iPXE') }));
    expect(userClassesOf(bare)).toEqual(['iPXE']);
    const framed = parseDhcpPacket(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, userClass: Buffer.from([4, ...Buffer.from('iPXE'), 2, 0x61, 0x62]) }));
    expect(userClassesOf(framed)).toEqual(['iPXE', 'ab']);
  });

  it('joins a repeated option (RFC 3396) and skips pad bytes', () => {
    const bytes = dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, extra: [] });
    const withSplit = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from([0, 0, 60, 3, 0x50, 0x58, 0x45, 60, 6, ...Buffer.from('Client'), 255])]);
    expect(vendorClassOf(parseDhcpPacket(withSplit))).toBe('PXEClient');
  });

  it.each([
    ['an empty datagram', Buffer.alloc(0)],
    ['a header cut short', dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(0, 200)],
    ['a wrong op', Buffer.concat([Buffer.from([7]), dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(1)])],
    ['no magic cookie', Buffer.concat([dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(0, 236), Buffer.from([1, 2, 3, 4, 255])])],
    ['an option past the end', Buffer.concat([dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(0, 240), Buffer.from([60, 200, 1, 2])])],
    ['no end marker', dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(0, 243)],
    ['a token-ring hardware type', Buffer.concat([Buffer.from([1, 6]), dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(2)])],
  ])('refuses %s with DHCP_MALFORMED', (_, bytes) => {
    expect(() => parseDhcpPacket(bytes)).toThrow(expect.objectContaining({ code: 'DHCP_MALFORMED' }));
  });

  test.prop([fc.uint8Array({ maxLength: 600 })], { numRuns: 500 })('throws nothing but DHCP_MALFORMED on random bytes', (bytes) => {
    try {
      parseDhcpPacket(Buffer.from(bytes));
    } catch (err) {
      expect(err).toBeInstanceOf(PxeError);
    }
  });

  test.prop([fc.uint8Array({ minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: 239 })], { numRuns: 300 })(
    'throws nothing but DHCP_MALFORMED when a real request has its bytes garbled',
    (garbage, at) => {
      const bytes = dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass });
      const garbled = Buffer.concat([bytes.subarray(0, 240 + (at % 20)), Buffer.from(garbage)]);
      try {
        parseDhcpPacket(garbled);
      } catch (err) {
        expect(err).toBeInstanceOf(PxeError);
      }
    },
  );
});

describe('DHCP packet encoding', () => {
  it('round-trips a reply, pads it to the BOOTP minimum and splits options over 255 bytes', () => {
    const long = Buffer.alloc(300, 0x41);
    const reply = {
      ...parseDhcpPacket(dhcpRequestBytes({ mac: '52:54:00:00:00:02', type: 1 })),
      op: 2 as const,
      yiaddr: '10.9.0.20',
      file: 'undionly.kpxe',
      options: new Map([
        [DhcpOption.MessageType, Buffer.from([2])],
        [DhcpOption.BootfileName, long],
      ]),
    };
    const bytes = encodeDhcpPacket(reply);
    expect(bytes.length).toBeGreaterThanOrEqual(300);
    expect(bytes[240]).toBe(DhcpOption.MessageType);
    const back = parseDhcpPacket(bytes);
    expect(back.yiaddr).toBe('10.9.0.20');
    expect(back.file).toBe('undionly.kpxe');
    expect(back.options.get(DhcpOption.BootfileName)).toEqual(long);
  });
});
