import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPool } from '../../../daemon/site/pxe/addressPool.ts';
import { DhcpOption, messageTypeOf, parseDhcpPacket, type DhcpPacket } from '../../../daemon/site/pxe/dhcpPacket.ts';
import { startPxeDhcp, type PxeDhcpServer } from '../../../daemon/site/pxe/proxyDhcp.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { dhcpRequestBytes, pxeRomVendorClass } from './pxePackets.ts';

const known = new Map([['52:54:00:00:00:01', { nodeId: 'n1' }]]);
const log = createLogger('pxe-test', 'silent');

/** A client socket standing in for the machine's port 68; replies to "broadcast" come to it on loopback. */
async function clientSocket(): Promise<{ socket: Socket; port: number; next(ms?: number): Promise<DhcpPacket | undefined> }> {
  const socket = createSocket('udp4');
  const queue: Buffer[] = [];
  let waiter: ((b: Buffer) => void) | undefined;
  socket.on('message', (msg) => (waiter ? (waiter(msg), (waiter = undefined)) : queue.push(msg)));
  await new Promise<void>((ok) => socket.bind(0, '127.0.0.1', () => ok()));
  return {
    socket,
    port: socket.address().port,
    next: (ms = 400) =>
      new Promise((resolve) => {
        const queued = queue.shift();
        if (queued) return resolve(parseDhcpPacket(queued));
        const timer = setTimeout(() => ((waiter = undefined), resolve(undefined)), ms);
        waiter = (msg) => (clearTimeout(timer), resolve(parseDhcpPacket(msg)));
      }),
  };
}

describe('ProxyDHCP over UDP', () => {
  let server: PxeDhcpServer;
  let client: Awaited<ReturnType<typeof clientSocket>>;
  const send = (bytes: Buffer, port: number) => new Promise<void>((ok) => client.socket.send(bytes, port, '127.0.0.1', () => ok()));

  beforeAll(async () => {
    client = await clientSocket();
    server = await startPxeDhcp({
      serverIp: '127.0.0.1',
      listenAddress: '127.0.0.1',
      knownMac: (mac) => known.get(mac),
      scriptUrl: (node) => `http://127.0.0.1:9/boot/${node.nodeId}/t.ipxe`,
      ports: { dhcp: 0, pxe: 0, client: client.port },
      broadcastAddress: '127.0.0.1',
      log,
    });
  });
  afterAll(async () => {
    await server.close();
    client.socket.close();
  });

  it('offers a known PXE ROM the iPXE binary on the DHCP port', async () => {
    await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass, arch: 0, xid: 11 }), server.ports.dhcp);
    const offer = await client.next();
    expect(offer).toMatchObject({ op: 2, xid: 11, yiaddr: '0.0.0.0', file: 'undionly.kpxe' });
    expect(messageTypeOf(offer!)).toBe(2);
  });

  it('acknowledges an iPXE REQUEST on port 4011 with the HTTP script, back to where it came from', async () => {
    await send(
      dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 3, vendorClass: pxeRomVendorClass, userClass: Buffer.from('iPXE'), serverId: '127.0.0.1', xid: 12 }),
      server.ports.pxe,
    );
    const ack = await client.next();
    expect(messageTypeOf(ack!)).toBe(5);
    expect(ack!.options.get(DhcpOption.BootfileName)?.toString()).toBe('http://127.0.0.1:9/boot/n1/t.ipxe');
  });

  it('gives a MAC no node has no answer at all', async () => {
    await send(dhcpRequestBytes({ mac: '52:54:00:99:99:99', type: 1, vendorClass: pxeRomVendorClass, arch: 0 }), server.ports.dhcp);
    await send(dhcpRequestBytes({ mac: '52:54:00:99:99:99', type: 3, vendorClass: pxeRomVendorClass, serverId: '127.0.0.1' }), server.ports.pxe);
    expect(await client.next()).toBeUndefined();
  });

  it('leaves a known machine that is not PXE-booting to the LAN DHCP server', async () => {
    await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, vendorClass: 'udhcp 1.35.0' }), server.ports.dhcp);
    expect(await client.next()).toBeUndefined();
  });

  it('drops malformed datagrams and keeps serving', async () => {
    for (const junk of [
      Buffer.alloc(0),
      Buffer.from('hello'),
      Buffer.alloc(300, 0xff),
      dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1 }).subarray(0, 241),
    ]) {
      await send(junk, server.ports.dhcp);
      await send(junk, server.ports.pxe);
    }
    expect(await client.next(200)).toBeUndefined();
    await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, vendorClass: pxeRomVendorClass, arch: 0, xid: 13 }), server.ports.dhcp);
    expect((await client.next())?.xid).toBe(13);
  });
});

describe('DHCP server mode', () => {
  it('leases a known MAC its address, NAKs a request for another, ignores strangers', async () => {
    const client = await clientSocket();
    const server = await startPxeDhcp({
      serverIp: '127.0.0.1',
      listenAddress: '127.0.0.1',
      knownMac: (mac) => known.get(mac),
      scriptUrl: () => 'http://127.0.0.1:9/x.ipxe',
      pool: new AddressPool({ first: '10.9.0.100', last: '10.9.0.110', subnetMask: '255.255.255.0', router: '10.9.0.1' }),
      ports: { dhcp: 0, pxe: 0, client: client.port },
      broadcastAddress: '127.0.0.1',
      log,
    });
    const send = (bytes: Buffer) => new Promise<void>((ok) => client.socket.send(bytes, server.ports.dhcp, '127.0.0.1', () => ok()));
    try {
      await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 1, vendorClass: 'udhcp 1.35.0' }));
      const offer = await client.next();
      expect(offer?.yiaddr).toBe('10.9.0.100');
      expect(offer?.options.has(DhcpOption.BootfileName)).toBe(false);
      await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 3, serverId: '127.0.0.1', requestedIp: '10.9.0.100' }));
      expect(messageTypeOf((await client.next())!)).toBe(5);
      await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 3, serverId: '127.0.0.1', requestedIp: '10.9.0.105' }));
      expect(messageTypeOf((await client.next())!)).toBe(6);
      await send(dhcpRequestBytes({ mac: '52:54:00:00:00:01', type: 3, serverId: '10.9.0.254', requestedIp: '10.9.0.100' }));
      await send(dhcpRequestBytes({ mac: '52:54:00:99:99:99', type: 1 }));
      expect(await client.next()).toBeUndefined();
    } finally {
      await server.close();
      client.socket.close();
    }
  });
});
