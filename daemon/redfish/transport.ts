import { request, type IncomingHttpHeaders } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

import { RedfishError } from './errors.ts';
import { spkiSha256 } from './pin.ts';

/** How the BMC's certificate is trusted; with none of these, the chain must verify against the system store. */
export interface RedfishTlsOptions {
  /** base64 SHA-256 of the BMC certificate's SubjectPublicKeyInfo. When set, it is the trust anchor (BMC certs are self-signed). */
  pinnedSpkiSha256?: string;
  /** PEM CA certificates the chain must verify against instead of the system store; the name must match the address. */
  ca?: string;
  /** Lab only: verify nothing. The caller is expected to say so loudly. */
  insecure?: boolean;
}

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type Transport = (req: RawRequest) => Promise<RawResponse>;

const maxResponseBytes = 32 * 1024 * 1024;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 3;
const unreachable = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

function mapSocketError(error: unknown, what: string): RedfishError {
  if (error instanceof RedfishError) return error;
  const code = (error as { code?: unknown }).code;
  const text = typeof code === 'string' ? code : 'socket error';
  if (text === 'ETIMEDOUT') return new RedfishError('REDFISH_TIMEOUT', `${what}: connection timed out`, { cause: error });
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(text)) {
    return new RedfishError('REDFISH_TLS_PIN_MISMATCH', `${what}: BMC certificate not trusted (${text})`, { cause: error });
  }
  const kind = unreachable.has(text) ? 'BMC unreachable' : 'connection failed';
  return new RedfishError('REDFISH_UNAVAILABLE', `${what}: ${kind} (${text})`, { cause: error });
}

function parseBody(raw: Buffer, status: number, contentType: string | undefined, what: string): unknown {
  if (raw.length === 0) return undefined;
  const textBody = raw.toString('utf8');
  const looksJson = /json/i.test(contentType ?? '') || /^\s*[{[]/.test(textBody);
  if (!looksJson) return undefined;
  try {
    return JSON.parse(textBody) as unknown;
  } catch (cause) {
    // An error page in HTML/garbage on a failed request still gets mapped by status; only a 2xx must parse.
    if (status >= 400) return undefined;
    throw new RedfishError('REDFISH_UNAVAILABLE', `${what}: BMC returned malformed JSON`, { cause, status });
  }
}

/**
 * One HTTP exchange per connection. For HTTPS the TLS handshake is completed and the pin checked *before* the
 * request is handed to node:http, so no header (and so no Basic credential) is ever written to an unverified
 * peer. One connection per request also sidesteps the keep-alive bugs many BMC web servers have.
 *
 * A redirect is followed only to https on the same host (BMCs that answer plain http with a redirect to their https
 * port, or add a trailing slash): an upgrade from http sticks for every later request. Any other redirect is returned
 * as it is, and the caller refuses it. With TLS options on an http origin, https is expected: requests go out over
 * plain http without their credentials, and an answer that is not the redirect to https is refused.
 */
export function createTransport(options: { origin: URL; tls?: RedfishTlsOptions; timeoutMs: number }): Transport {
  const { timeoutMs } = options;
  let secure = options.origin.protocol === 'https:';
  const host = options.origin.hostname.replace(/^\[(.*)\]$/, '$1');
  let port = Number(options.origin.port) || (secure ? 443 : 80);
  const pin = options.tls?.pinnedSpkiSha256;
  const rejectUnauthorized = pin === undefined && options.tls?.insecure !== true;

  /** Opens the TLS connection; `onReady` runs only once the peer is verified (chain and/or pin). */
  const openTls = (what: string, onError: (error: RedfishError) => void, onReady: () => void): TLSSocket => {
    const socket = tlsConnect({
      host,
      port,
      rejectUnauthorized,
      ALPNProtocols: ['http/1.1'],
      ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
      ...(isIP(host) === 0 ? { servername: host } : {}),
    });
    socket.once('secureConnect', () => {
      const cert = socket.getPeerX509Certificate();
      if (pin !== undefined && (!cert || spkiSha256(cert) !== pin)) {
        socket.destroy();
        onError(new RedfishError('REDFISH_TLS_PIN_MISMATCH', `${what}: BMC certificate does not match the pinned SPKI SHA-256`));
        return;
      }
      onReady();
    });
    // `on`, not `once`: a late second error with no listener would crash the process.
    socket.on('error', (error) => onError(mapSocketError(error, what)));
    return socket;
  };

  const exchange = (req: RawRequest): Promise<RawResponse> =>
    new Promise<RawResponse>((resolve, reject) => {
      const what = `${req.method} ${req.path}`;
      const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
      const headers: Record<string, string> = {
        Accept: 'application/json',
        'OData-Version': '4.0',
        Connection: 'close',
        ...req.headers,
        ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
      };
      let settled = false;
      let socket: Socket | undefined;
      const finish = (error: RedfishError | undefined, response?: RawResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          socket?.destroy();
          reject(error);
        } else if (response) resolve(response);
      };
      const timer = setTimeout(() => finish(new RedfishError('REDFISH_TIMEOUT', `${what}: no answer within ${timeoutMs} ms`)), timeoutMs);

      const send = (connected?: TLSSocket): void => {
        const createConnection = (): Socket => {
          socket = connected ?? netConnect({ host, port });
          return socket;
        };
        const outgoing = request({ host, port, method: req.method, path: req.path, headers, createConnection }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxResponseBytes) finish(new RedfishError('REDFISH_UNAVAILABLE', `${what}: response too large`));
            else chunks.push(chunk);
          });
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            try {
              const body = parseBody(Buffer.concat(chunks), status, res.headers['content-type'], what);
              finish(undefined, { status, headers: res.headers, body });
            } catch (error) {
              finish(mapSocketError(error, what));
            }
          });
          res.on('error', (error) => finish(mapSocketError(error, what)));
        });
        outgoing.on('error', (error) => finish(mapSocketError(error, what)));
        outgoing.end(payload);
      };

      if (!secure) send();
      else {
        const connected = openTls(
          what,
          (error) => finish(error),
          () => {
            if (!settled) send(connected);
          },
        );
        socket = connected;
      }
    });

  /** The https URL on this host a redirect names, or undefined when it names anything else. */
  const sameHostHttps = (res: RawResponse): URL | undefined => {
    const location = res.headers.location;
    if (!redirectStatuses.has(res.status) || typeof location !== 'string') return undefined;
    let target: URL;
    try {
      target = new URL(location, `${secure ? 'https' : 'http'}://${options.origin.host}/`);
    } catch {
      return undefined;
    }
    return target.protocol === 'https:' && target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase() === host.toLowerCase() ? target : undefined;
  };

  const expectsTls = options.tls !== undefined;
  const withoutCredentials = (req: RawRequest): RawRequest => {
    const { Authorization: _basic, 'X-Auth-Token': _token, ...headers } = req.headers;
    const { Password: _password, ...body } = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
    return { ...req, headers, ...(req.body === undefined ? {} : { body }) };
  };

  return async (req) => {
    let current = req;
    for (let hop = 0; ; hop += 1) {
      const probing = !secure && expectsTls;
      const res = await exchange(probing ? withoutCredentials(current) : current);
      const target = hop < maxRedirects ? sameHostHttps(res) : undefined;
      if (!target) {
        if (probing)
          throw new RedfishError('REDFISH_TLS_PIN_MISMATCH', `${req.method} ${req.path}: BMC answered over plain http, but TLS options require https`);
        return res;
      }
      secure = true;
      port = Number(target.port) || 443;
      current = { ...current, path: `${target.pathname}${target.search}` };
    }
  };
}
