import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../services/platform/logger.ts';
import type { BootTicket, BootTickets } from './bootTickets.ts';
import { parseByteRange } from './byteRange.ts';
import type { ImageCache } from './imageCache.ts';
import { firstStageIpxeScript } from './ipxeScript.ts';

export interface BootServerOptions {
  host: string;
  port: number;
  tickets: BootTickets;
  images: ImageCache;
  /**
   * The iPXE script of a boot, given the server's own base URL. A rejection with a `BOOT_*` code (the control plane
   * refused this boot) answers 404; any other (nobody answered, the platform is unavailable) answers 503 with
   * `Retry-After`, which iPXE waits out before it asks again with the same ticket.
   */
  script: (ticket: BootTicket, baseUrl: string) => string | Promise<string>;
  /** A spent ticket was fetched again: told to the control plane (the boot is contested); the fetch gets a 404. */
  refetched?: (ticket: BootTicket) => Promise<void>;
  /** `Retry-After` of a 503, in seconds. Default 5 (iPXE's own default). */
  retryAfterSeconds?: number;
  /** Broker mode: the public join credential, served at `/join.creds` for ramdisks to join with. */
  joinCreds?: string;
  /** A folder with the built ramdisk (`vmlinuz`, `initrd.img`), served at `/ramdisk/<name>` to booting machines. */
  ramdiskDir?: string;
  log: Logger;
}

export interface BootServer {
  baseUrl: string;
  close(): Promise<void>;
}

const BOOT_PATH = /^\/boot\/([a-z0-9][a-z0-9_-]{0,62})\/([A-Za-z0-9_-]{43})\.ipxe$/;
const IMAGE_PATH = /^\/images\/([0-9a-f]{64})$/;
/**
 * Bulk responses (images, the ramdisk) close their connection when done: Node starts the keep-alive timer (5 s) at
 * the last write into the socket, not when the client has read it, so a slow reader (a ramdisk under TCG reads ~1 MB/s)
 * lost the tail of a 200 MB image to it ("other side closed"). One transfer per connection needs no keep-alive.
 */
const BULK = { connection: 'close' } as const;

/** The ramdisk's two files, by fixed names only: nothing else of the folder is reachable. */
const RAMDISK_PATH = /^\/ramdisk\/(vmlinuz|initrd\.img)$/;

async function serveFile(req: IncomingMessage, res: ServerResponse, file: string, onSent?: (bytes: number) => void): Promise<void> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return plain(res, 404, 'not found\n');
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size, ...BULK });
  if (req.method === 'HEAD') return void res.end();
  if (onSent) res.once('finish', () => onSent(size));
  createReadStream(file).pipe(res);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function serveImage(req: IncomingMessage, res: ServerResponse, images: ImageCache, sha256: string): Promise<void> {
  const file = await images.path(sha256);
  if (!file) return plain(res, 404, 'unknown image\n');
  const size = images.size(file);
  const range = parseByteRange(req.headers.range, size);
  const headers = { 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream', etag: `"${sha256}"`, ...BULK };
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...headers, 'content-range': `bytes */${size}` });
    return void res.end();
  }
  const { start, end } = range ?? { start: 0, end: size - 1 };
  res.writeHead(range ? 206 : 200, {
    ...headers,
    'content-length': size === 0 ? 0 : end - start + 1,
    ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === 'HEAD' || size === 0) return void res.end();
  createReadStream(file, { start, end }).pipe(res);
}

/** A boot script fetch: served once per ticket; a second fetch is reported and refused like any unknown path. */
async function serveBootScript(req: IncomingMessage, res: ServerResponse, options: BootServerOptions, nodeId: string, ticketId: string, baseUrl: string) {
  const fetched = options.tickets.take(nodeId, ticketId);
  if (fetched.kind === 'unknown') return plain(res, 404, 'not found\n');
  const { ticket } = fetched;
  // Only a GET spends the ticket and mints the boot's join token.
  if (req.method === 'HEAD' && fetched.kind === 'first') {
    options.tickets.released(ticket);
    return plain(res, 200, '', { 'cache-control': 'no-store' });
  }
  if (fetched.kind === 'again') {
    options.log.warn({ nodeId, workflowId: ticket.boot.workflowId, code: 'BOOT_CONTESTED' }, 'boot script fetched a second time: the boot is contested');
    await options.refetched?.(ticket).catch((err: unknown) => options.log.error({ err, nodeId }, 'a contested boot could not be reported'));
    return plain(res, 404, 'not found\n');
  }
  let script: string;
  try {
    script = await options.script(ticket, baseUrl);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'BOOT_CONTESTED') options.tickets.spent(ticket);
    else options.tickets.released(ticket);
    if (typeof code === 'string' && code.startsWith('BOOT_')) {
      options.log.warn({ nodeId, code }, 'no boot script for this machine now');
      return plain(res, 404, 'not found\n');
    }
    // A few seconds of `join` or NATS downtime must not cost the machine its boot: iPXE retries after the delay.
    options.log.warn({ nodeId, code, err }, 'boot script unavailable for now; the machine is asked to retry');
    return plain(res, 503, 'boot script unavailable; retry\n', { 'retry-after': String(options.retryAfterSeconds ?? 5), 'cache-control': 'no-store' });
  }
  options.tickets.spent(ticket);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(script), 'cache-control': 'no-store' });
  res.end(script);
}

/** The first-stage iPXE script, public: operators embed it into their iPXE build (`make … EMBED=first-stage.ipxe`). */
export const FIRST_STAGE_PATH = '/first-stage.ipxe';

/**
 * The site agent's HTTP face toward its machines: `/boot/<nodeId>/<ticket>.ipxe` (one boot's iPXE script, served once),
 * `/images/<sha256>` (verified cached images, with Range support so an interrupted download can resume),
 * `/first-stage.ipxe` and, given a `ramdiskDir`, `/ramdisk/vmlinuz` and `/ramdisk/initrd.img`. Anything else, a
 * wrong or spent ticket included, is a plain 404: nothing tells a prober which part was wrong.
 */
export async function startBootServer(options: BootServerOptions): Promise<BootServer> {
  let baseUrl = '';
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed\n');
    const boot = BOOT_PATH.exec(path);
    if (boot) return serveBootScript(req, res, options, boot[1]!, boot[2]!, baseUrl);
    if (path === '/join.creds' && options.joinCreds) return plain(res, 200, options.joinCreds);
    if (path === FIRST_STAGE_PATH) return plain(res, 200, firstStageIpxeScript());
    const ramdisk = RAMDISK_PATH.exec(path);
    // Logged when sent whole: a machine that fetched its initrd is booting the ramdisk (what an operator follows a boot by).
    if (ramdisk && options.ramdiskDir)
      return serveFile(req, res, join(options.ramdiskDir, ramdisk[1]!), (bytes) => options.log.info({ file: ramdisk[1], bytes }, 'ramdisk file served'));
    const image = IMAGE_PATH.exec(path);
    if (image) return serveImage(req, res, options.images, image[1]!);
    plain(res, 404, 'not found\n');
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // The path is not logged: for boot scripts it holds the machine's secret token.
      options.log.warn({ err }, 'boot server request failed');
      if (!res.headersSent) plain(res, 502, 'image unavailable\n');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  baseUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${address.port}`;
  return {
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
