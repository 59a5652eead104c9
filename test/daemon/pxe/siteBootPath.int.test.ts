import { createSocket, type Socket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DhcpOption, parseDhcpPacket, type DhcpPacket } from '../../../daemon/site/pxe/dhcpPacket.ts';
import { PxeArms } from '../../../daemon/site/pxe/pxeArms.ts';
import { pxeAddressOf, startSiteBootPath, type SiteBootPath } from '../../../daemon/site/pxe/siteBootPath.ts';
import { TftpOp, encodeTftpPacket, parseTftpPacket } from '../../../daemon/site/pxe/tftpPacket.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { dhcpRequestBytes, pxeRomVendorClass } from './pxePackets.ts';

const log = createLogger('site-boot-path-test', 'silent');
const ARMED = '52:54:00:00:00:0a';
const STRANGER = '52:54:00:00:00:0b';

/** One socket standing in for a machine's port 68 (replies "broadcast" to loopback reach it) and its TFTP client. */
async function machine(): Promise<{ socket: Socket; port: number; lastFrom(): number; next(ms?: number): Promise<Buffer | undefined>; close(): void }> {
  const socket = createSocket('udp4');
  const queue: Buffer[] = [];
  let waiter: ((b: Buffer) => void) | undefined;
  let from = 0;
  socket.on('message', (msg, rinfo) => (from = rinfo.port) && (waiter ? (waiter(msg), (waiter = undefined)) : queue.push(msg)));
  await new Promise<void>((ok) => socket.bind(0, '127.0.0.1', () => ok()));
  return {
    socket,
    port: socket.address().port,
    lastFrom: () => from,
    next: (ms = 400) =>
      new Promise((resolve) => {
        const queued = queue.shift();
        if (queued) return resolve(queued);
        const timer = setTimeout(() => ((waiter = undefined), resolve(undefined)), ms);
        waiter = (msg) => (clearTimeout(timer), resolve(msg));
      }),
    close: () => socket.close(),
  };
}

describe('bcd site network boot path (DHCP + TFTP, armed MACs only)', () => {
  const state = mkdtempSync(join(tmpdir(), 'bc-bootpath-'));
  const tftpRoot = join(state, 'tftp');
  let arms: PxeArms;
  let path: SiteBootPath;
  let client: Awaited<ReturnType<typeof machine>>;
  const send = (bytes: Buffer, port: number) => new Promise<void>((ok) => client.socket.send(bytes, port, '127.0.0.1', () => ok()));
  const discover = async (mac: string): Promise<DhcpPacket | undefined> => {
    await send(dhcpRequestBytes({ mac, type: 1, vendorClass: pxeRomVendorClass, arch: 0 }), path.dhcp.ports.dhcp);
    const reply = await client.next();
    return reply ? parseDhcpPacket(reply) : undefined;
  };

  beforeAll(async () => {
    rmSync(tftpRoot, { recursive: true, force: true });
    mkdirSync(tftpRoot);
    writeFileSync(join(tftpRoot, 'undionly.kpxe'), Buffer.alloc(1500, 0x5a));
    client = await machine();
    arms = new PxeArms(state);
    path = await startSiteBootPath({
      settings: { interface: 'lo', tftpRoot, ports: { dhcp: 0, pxe: 0, tftp: 0, client: client.port }, broadcastAddress: '127.0.0.1' },
      arms,
      scriptUrl: (nodeId) => `http://127.0.0.1:9/boot/${nodeId}/t.ipxe`,
      log,
    });
  });
  afterAll(async () => {
    await path.close();
    client.close();
    rmSync(state, { recursive: true, force: true });
  });

  it('takes its address from --pxe-interface, and refuses an interface that does not exist', () => {
    expect(path.address).toBe('127.0.0.1');
    expect(pxeAddressOf({ interface: 'lo' })).toEqual({ address: '127.0.0.1', prefix: 8 });
    expect(() => pxeAddressOf({ interface: 'no-such-if0' })).toThrow(/does not exist/);
    expect(() => pxeAddressOf({ interface: 'lo', address: '10.9.9.9' })).toThrow(/not an address of lo/);
  });

  it('answers no MAC before the control plane set its node to boot PXE, and a stranger never', async () => {
    expect(await discover(ARMED)).toBeUndefined();
    arms.arm('n1', ['52:54:00:00:00:0A']);
    const offer = await discover(ARMED);
    expect(offer).toMatchObject({ op: 2, yiaddr: '0.0.0.0', file: 'undionly.kpxe', siaddr: '127.0.0.1' });
    expect(await discover(STRANGER)).toBeUndefined();
  });

  it('serves Debian iPXE over TFTP to the armed machine', async () => {
    await send(encodeTftpPacket({ op: TftpOp.RRQ, filename: 'undionly.kpxe', mode: 'octet', options: new Map() }), path.tftp.port);
    let received = 0;
    for (let block = 1; ; block++) {
      const data = parseTftpPacket((await client.next(2_000))!);
      expect(data).toMatchObject({ op: TftpOp.DATA, block });
      const bytes = (data as { data: Buffer }).data;
      received += bytes.length;
      // The transfer's own port (its TID) is where the ACK goes.
      await new Promise<void>((ok) => client.socket.send(encodeTftpPacket({ op: TftpOp.ACK, block }), client.lastFrom(), '127.0.0.1', () => ok()));
      if (bytes.length < 512) break;
    }
    expect(received).toBe(1500);
  });

  it('keeps arms across a restart of the site agent, and forgets a node once disarmed or expired', async () => {
    expect(new PxeArms(state).nodeOf(ARMED)).toEqual({ nodeId: 'n1' });
    arms.disarm('n1');
    expect(await discover(ARMED)).toBeUndefined();
    expect(new PxeArms(state).nodeOf(ARMED)).toBeUndefined();
    let now = 1_000;
    const aging = new PxeArms(join(state, 'tftp'), { ttlMs: 60_000, now: () => now });
    aging.arm('n2', ['52:54:00:00:00:0c']);
    now += 59_000;
    expect(aging.nodeOf('52:54:00:00:00:0c')).toEqual({ nodeId: 'n2' });
    now += 2_000;
    expect(aging.nodeOf('52:54:00:00:00:0c')).toBeUndefined();
  });

  it('hands out an address only when given a pool, and then only to armed machines', async () => {
    const server = await machine();
    const poolArms = new PxeArms(join(state, 'tftp'));
    const pooled = await startSiteBootPath({
      settings: {
        address: '127.0.0.1',
        tftpRoot,
        dhcpPool: { first: '10.77.0.100', last: '10.77.0.101', subnetMask: '255.255.255.0' },
        ports: { dhcp: 0, pxe: 0, tftp: 0, client: server.port },
        broadcastAddress: '127.0.0.1',
      },
      arms: poolArms,
      scriptUrl: (nodeId) => `http://127.0.0.1:9/boot/${nodeId}/t.ipxe`,
      log,
    });
    try {
      const ask = async (mac: string) => {
        await new Promise<void>((ok) =>
          server.socket.send(dhcpRequestBytes({ mac, type: 1, vendorClass: pxeRomVendorClass, arch: 0 }), pooled.dhcp.ports.dhcp, '127.0.0.1', () => ok()),
        );
        const reply = await server.next();
        return reply ? parseDhcpPacket(reply) : undefined;
      };
      expect(await ask(ARMED)).toBeUndefined();
      poolArms.arm('n1', [ARMED]);
      const offer = await ask(ARMED);
      expect(offer).toMatchObject({ yiaddr: '10.77.0.100', file: 'undionly.kpxe' });
      expect(offer!.options.get(DhcpOption.SubnetMask)).toEqual(Buffer.from([255, 255, 255, 0]));
      expect(await ask(STRANGER)).toBeUndefined();
    } finally {
      await pooled.close();
      server.close();
    }
  });
});
