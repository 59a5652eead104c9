import { randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTftpPacket, parseTftpPacket, type TftpPacket } from '../../../daemon/site/pxe/tftpPacket.ts';
import { startTftpServer, type TftpServer } from '../../../daemon/site/pxe/tftpServer.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { rrqBytes } from './pxePackets.ts';

const scratch = mkdtempSync(join(tmpdir(), 'emusite-tftp-'));
const root = join(scratch, 'served');
const payload = randomBytes(200_000);

/** A lock-step TFTP client: sends the request, ACKs each block, returns the bytes or the server's ERROR. */
async function fetchFile(
  port: number,
  request: Buffer,
  opts: { ackOack?: boolean } = {},
): Promise<{ data?: Buffer; oack?: Map<string, string>; error?: { code: number; message: string } }> {
  const socket = createSocket('udp4');
  await new Promise<void>((ok) => socket.bind(0, '127.0.0.1', () => ok()));
  const chunks: Buffer[] = [];
  let oack: Map<string, string> | undefined;
  let blockSize = 512;
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('TFTP test client timed out')), 10_000);
      socket.on('message', (msg: Buffer, from: RemoteInfo) => {
        const packet: TftpPacket = parseTftpPacket(msg);
        const ack = (block: number) => socket.send(encodeTftpPacket({ op: 4, block }), from.port, from.address);
        if (packet.op === 5) return (clearTimeout(timer), resolve({ error: { code: packet.code, message: packet.message } }));
        if (packet.op === 6) {
          oack = packet.options;
          blockSize = Number(packet.options.get('blksize') ?? 512);
          return opts.ackOack === false ? undefined : ack(0);
        }
        if (packet.op === 3) {
          chunks.push(packet.data);
          ack(packet.block);
          if (packet.data.length < blockSize) {
            clearTimeout(timer);
            resolve({ data: Buffer.concat(chunks), ...(oack ? { oack } : {}) });
          }
        }
      });
      socket.send(request, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}

describe('TFTP server', () => {
  let server: TftpServer;
  beforeAll(async () => {
    mkdirSync(join(root, 'efi'), { recursive: true });
    writeFileSync(join(root, 'undionly.kpxe'), payload);
    writeFileSync(join(root, 'efi/ipxe.efi'), Buffer.alloc(1024, 7));
    writeFileSync(join(scratch, 'secret.txt'), 'outside');
    symlinkSync(join(scratch, 'secret.txt'), join(root, 'escape'));
    server = await startTftpServer({ root, address: '127.0.0.1', port: 0, timeoutMs: 200, retries: 2, log: createLogger('tftp-test', 'silent') });
  });
  afterAll(async () => {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('serves a file in 512-byte blocks without options (RFC 1350)', async () => {
    const got = await fetchFile(server.port, rrqBytes('undionly.kpxe'));
    expect(got.oack).toBeUndefined();
    expect(got.data?.equals(payload)).toBe(true);
  });

  it('grants blksize and tsize in an OACK and serves with the larger blocks', async () => {
    const got = await fetchFile(server.port, rrqBytes('/undionly.kpxe', { blksize: '1428', tsize: '0', nonsense: '1' }));
    expect(got.oack).toEqual(
      new Map([
        ['blksize', '1428'],
        ['tsize', String(payload.length)],
      ]),
    );
    expect(got.data?.equals(payload)).toBe(true);
  });

  it('serves a file in a subfolder, and a file that is an exact multiple of the block size', async () => {
    const got = await fetchFile(server.port, rrqBytes('efi/ipxe.efi', { blksize: '512' }));
    expect(got.data?.length).toBe(1024);
  });

  it.each([['../secret.txt'], ['/../secret.txt'], ['efi/../../secret.txt'], ['escape'], ['..\\secret.txt']])(
    'refuses %s as outside the served folder',
    async (file) => {
      const got = await fetchFile(server.port, rrqBytes(file));
      expect(got.error?.code).toBe(2);
      expect(got.data).toBeUndefined();
    },
  );

  it('answers a missing file with error 1, a write with error 2, netascii with error 4', async () => {
    expect((await fetchFile(server.port, rrqBytes('nope.efi'))).error?.code).toBe(1);
    const wrq = rrqBytes('undionly.kpxe');
    wrq[1] = 2;
    expect((await fetchFile(server.port, wrq)).error?.code).toBe(2);
    expect((await fetchFile(server.port, rrqBytes('undionly.kpxe', {}, 'netascii'))).error?.code).toBe(4);
  });

  it('gives up on a client that never acknowledges, and keeps serving others', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((ok) => silent.bind(0, '127.0.0.1', () => ok()));
    silent.send(rrqBytes('undionly.kpxe'), server.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 50));
    expect(server.active).toBe(1);
    const got = await fetchFile(server.port, rrqBytes('efi/ipxe.efi'));
    expect(got.data?.length).toBe(1024);
    await new Promise((r) => setTimeout(r, 800));
    expect(server.active).toBe(0);
    silent.close();
  });

  it('drops malformed datagrams without answering or stopping', async () => {
    const junk = createSocket('udp4');
    await new Promise<void>((ok) => junk.bind(0, '127.0.0.1', () => ok()));
    let answered = false;
    junk.on('message', () => (answered = true));
    for (const bytes of [Buffer.alloc(0), Buffer.from([0, 1]), Buffer.from([0, 1, 0x61]), Buffer.from([0, 9, 1, 1])])
      junk.send(bytes, server.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 300));
    junk.close();
    expect(answered).toBe(false);
    expect((await fetchFile(server.port, rrqBytes('efi/ipxe.efi'))).data?.length).toBe(1024);
  });
});
