import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Logger } from '../../../services/platform/logger.ts';
import { PxeError } from './pxeErrors.ts';
import { TftpErrorCode, TftpOp, encodeTftpPacket, parseTftpPacket, type TftpPacket } from './tftpPacket.ts';

export interface TftpServerOptions {
  /** The folder served, read-only; nothing outside it (`..`, absolute paths, symlinks out) is ever read. */
  root: string;
  address?: string;
  /** Default 69; 0 picks a free port (tests). */
  port?: number;
  /** Retransmission timeout when the client names none (RFC 2349 `timeout`), and tries before giving up. */
  timeoutMs?: number;
  retries?: number;
  log: Logger;
}

export interface TftpServer {
  port: number;
  /** Transfers in progress. */
  readonly active: number;
  close(): Promise<void>;
}

const DEFAULT_BLOCK = 512;
const MIN_BLOCK = 8;
const MAX_BLOCK = 65464;

class TftpRefusal extends Error {
  constructor(
    readonly tftpCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The file a request names, inside `root` after resolving `..` and symlinks, or a refusal. */
export async function resolveServedPath(root: string, filename: string): Promise<string> {
  // Firmware sends `/undionly.kpxe` and `undionly.kpxe` alike; both name the file at the root.
  const wanted = filename.replace(/^\/+/, '');
  if (wanted === '' || wanted.includes('\0') || wanted.split(/[\\/]/).includes('..'))
    throw new TftpRefusal(TftpErrorCode.AccessViolation, 'path outside the served folder');
  const rootReal = await realpath(root);
  let real: string;
  try {
    real = await realpath(resolve(rootReal, wanted));
  } catch {
    throw new TftpRefusal(TftpErrorCode.FileNotFound, 'file not found');
  }
  const rel = relative(rootReal, real);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel))
    throw new TftpRefusal(TftpErrorCode.AccessViolation, 'path outside the served folder');
  return real;
}

/** Options this server grants (RFC 2348 blksize, RFC 2349 tsize and timeout); others are ignored, as 2347 says. */
function negotiate(requested: Map<string, string>, size: number, mtu: number): { blockSize: number; timeoutMs?: number; granted: Map<string, string> } {
  const granted = new Map<string, string>();
  let blockSize = DEFAULT_BLOCK;
  let timeoutMs: number | undefined;
  const blksize = requested.get('blksize');
  if (blksize !== undefined && /^\d+$/.test(blksize) && Number(blksize) >= MIN_BLOCK) {
    blockSize = Math.min(Number(blksize), MAX_BLOCK, mtu);
    granted.set('blksize', String(blockSize));
  }
  if (requested.get('tsize') !== undefined) granted.set('tsize', String(size));
  const timeout = requested.get('timeout');
  if (timeout !== undefined && /^\d+$/.test(timeout) && Number(timeout) >= 1 && Number(timeout) <= 255) {
    timeoutMs = Number(timeout) * 1000;
    granted.set('timeout', timeout);
  }
  return { blockSize, ...(timeoutMs ? { timeoutMs } : {}), granted };
}

/**
 * A read-only TFTP server (RFC 1350 with the option extension, RFC 2347-2349) for the iPXE binaries: each transfer
 * runs from its own port (its TID), lock-step, retransmitting the last packet on timeout. Writes are refused; a
 * path outside the served folder is an access violation; malformed datagrams are dropped.
 */
export async function startTftpServer(options: TftpServerOptions): Promise<TftpServer> {
  const { log } = options;
  const transfers = new Set<Socket>();
  const running = new Set<Promise<void>>();
  let stopping = false;
  const listener = createSocket({ type: 'udp4', reuseAddr: true });
  const address = options.address ?? '0.0.0.0';

  const send = (socket: Socket, packet: TftpPacket, to: RemoteInfo) =>
    new Promise<void>((done) => {
      if (stopping) return done();
      socket.send(encodeTftpPacket(packet), to.port, to.address, () => done());
    });

  const transfer = async (request: Extract<TftpPacket, { op: 1 | 2 }>, client: RemoteInfo): Promise<void> => {
    const socket = createSocket('udp4');
    transfers.add(socket);
    let file: FileHandle | undefined;
    try {
      await new Promise<void>((ok) => socket.bind(0, address === '0.0.0.0' ? undefined : address, () => ok()));
      if (request.op === TftpOp.WRQ) throw new TftpRefusal(TftpErrorCode.AccessViolation, 'this server is read-only');
      if (request.mode !== 'octet') throw new TftpRefusal(TftpErrorCode.IllegalOperation, 'only octet mode is served');
      const path = await resolveServedPath(options.root, request.filename);
      file = await open(path, 'r');
      const size = (await file.stat()).size;
      const { blockSize, timeoutMs, granted } = negotiate(request.options, size, 65464);
      const wait = timeoutMs ?? options.timeoutMs ?? 1000;
      const retries = options.retries ?? 5;
      // One outstanding packet at a time: send it, wait for the ACK of its block, retransmit on silence.
      const exchange = async (packet: TftpPacket, expectAck: number): Promise<void> => {
        for (let attempt = 0; attempt <= retries && !stopping; attempt++) {
          await send(socket, packet, client);
          const outcome = await new Promise<'acked' | 'silent' | 'aborted'>((done) => {
            const finish = (result: 'acked' | 'silent' | 'aborted') => {
              clearTimeout(timer);
              socket.off('message', onMessage);
              done(result);
            };
            const timer = setTimeout(() => finish('silent'), wait);
            const onMessage = (msg: Buffer, from: RemoteInfo) => {
              if (from.address !== client.address || from.port !== client.port) {
                void send(socket, { op: TftpOp.ERROR, code: TftpErrorCode.UnknownTid, message: 'unknown transfer id' }, from);
                return;
              }
              let reply: TftpPacket;
              try {
                reply = parseTftpPacket(msg);
              } catch {
                return;
              }
              if (reply.op === TftpOp.ERROR) finish('aborted');
              else if (reply.op === TftpOp.ACK && reply.block === (expectAck & 0xffff)) finish('acked');
            };
            socket.on('message', onMessage);
          });
          if (outcome === 'acked') return;
          if (outcome === 'aborted') {
            // UEFI firmware reads tsize from the OACK and aborts, then asks again for the file itself.
            log.info({ file: request.filename, to: client.address }, 'TFTP client ended the transfer');
            return void (aborted = true);
          }
        }
        throw new TftpRefusal(-1, stopping ? 'server stopping' : 'client stopped acknowledging');
      };
      let aborted = false;
      if (granted.size > 0) await exchange({ op: TftpOp.OACK, options: granted }, 0);
      if (aborted) return;
      const buffer = Buffer.alloc(blockSize);
      // Blocks past 65535 wrap to 0, as iPXE, U-Boot and most servers agree for files over 32 MiB at 512 bytes.
      for (let block = 1, offset = 0; ; block++) {
        const { bytesRead } = await file.read(buffer, 0, blockSize, offset);
        offset += bytesRead;
        await exchange({ op: TftpOp.DATA, block: block & 0xffff, data: Buffer.from(buffer.subarray(0, bytesRead)) }, block);
        if (aborted) return;
        if (bytesRead < blockSize) break;
      }
      log.info({ file: request.filename, to: client.address, size, blockSize }, 'TFTP transfer complete');
    } catch (err) {
      if (err instanceof TftpRefusal) {
        if (err.tftpCode >= 0) await send(socket, { op: TftpOp.ERROR, code: err.tftpCode, message: err.message }, client);
        log.warn({ file: request.filename, to: client.address, reason: err.message }, 'TFTP transfer refused or abandoned');
      } else {
        await send(socket, { op: TftpOp.ERROR, code: TftpErrorCode.NotDefined, message: 'read failed' }, client);
        log.warn({ err, file: request.filename }, 'TFTP transfer failed');
      }
    } finally {
      await file?.close();
      transfers.delete(socket);
      socket.close();
    }
  };

  listener.on('message', (msg, client) => {
    let packet: TftpPacket;
    try {
      packet = parseTftpPacket(msg);
    } catch (err) {
      if (!(err instanceof PxeError)) throw err;
      log.debug({ from: client.address, reason: err.message }, 'TFTP datagram refused');
      return;
    }
    if (packet.op !== TftpOp.RRQ && packet.op !== TftpOp.WRQ) return;
    const done = transfer(packet, client).finally(() => running.delete(done));
    running.add(done);
  });
  const port = await new Promise<number>((ok, fail) => {
    listener.once('error', fail);
    listener.bind(options.port ?? 69, address, () => ok(listener.address().port));
  });
  return {
    port,
    get active() {
      return transfers.size;
    },
    close: async () => {
      // A transfer notices at its next packet or timeout, and closes its own socket.
      stopping = true;
      await Promise.all(running);
      await new Promise<void>((ok) => listener.close(() => ok()));
    },
  };
}
