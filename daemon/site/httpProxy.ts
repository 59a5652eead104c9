import { request, type IncomingHttpHeaders } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { HTTP_PROXY_MAX_RESPONSE_BYTES, type HttpProxyAnswer, type HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { AgentError } from '../agent/errors.ts';
import { spkiSha256 } from '../redfish/pin.ts';

/** Turns a `secret:<id>` header reference into its value, for one command (its node and the executor's ticket). */
export type SecretHeaderResolver = (ref: string, context: { nodeId: string; ticket: string | undefined }) => Promise<string>;

/**
 * Makes one `site.httpProxy` request for the control plane. The control plane already bounded the target (node
 * address, scheme, headers); here the agent enforces what only the wire shows: the TLS peer must match the pinned
 * SPKI before a single header (and so no secret) is written, a redirect is not followed but reported as a failure,
 * and an answer larger than the limit is cut off as a failure.
 */
export async function proxyHttp(req: HttpProxyRequest, nodeId: string, resolveSecret: SecretHeaderResolver | undefined): Promise<HttpProxyAnswer> {
  const url = new URL(req.url);
  const secure = url.protocol === 'https:';
  const host = url.hostname;
  const port = Number(url.port) || (secure ? 443 : 80);
  const headers: Record<string, string> = { ...req.headers, Connection: 'close' };
  for (const [name, ref] of Object.entries(req.secretHeaders)) {
    if (!resolveSecret) throw new AgentError('CREDENTIALS_MISSING', `this site agent cannot resolve ${ref} for header ${name}`);
    headers[name] = await resolveSecret(ref, { nodeId, ticket: req.secretTicket });
  }
  const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
  if (body) headers['Content-Length'] = String(body.length);
  const what = `${req.method} ${url.origin}${url.pathname}`;

  const socket = await new Promise<Socket>((resolve, reject) => {
    // Not trusted by chain (machine certs are self-signed): trusted only by the pin checked below.
    const s: Socket = secure ? tlsConnect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : netConnect({ host, port });
    const timer = setTimeout(() => (s.destroy(), reject(new AgentError('DRIVER_ERROR', `${what}: no connection within ${req.timeoutMs} ms`))), req.timeoutMs);
    const fail = (err: Error) => (clearTimeout(timer), reject(new AgentError('DRIVER_ERROR', `${what}: ${(err as { code?: string }).code ?? err.message}`)));
    s.on('error', fail);
    s.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      if (secure) {
        const cert = (s as ReturnType<typeof tlsConnect>).getPeerX509Certificate();
        if (!cert || spkiSha256(cert) !== req.tlsSpkiSha256) {
          s.destroy();
          return reject(new AgentError('DRIVER_ERROR', `${what}: peer certificate does not match the pinned SPKI SHA-256`));
        }
      }
      resolve(s);
    });
  });

  return new Promise<HttpProxyAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, answer?: HttpProxyAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        socket.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const timer = setTimeout(() => finish(new AgentError('DRIVER_ERROR', `${what}: no answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    const outgoing = request({ host, port, method: req.method, path: `${url.pathname}${url.search}`, headers, createConnection: () => socket }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        return finish(new AgentError('DRIVER_ERROR', `${what}: answered a redirect (${status}), which is not followed`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > HTTP_PROXY_MAX_RESPONSE_BYTES) finish(new AgentError('DRIVER_ERROR', `${what}: answer exceeds ${HTTP_PROXY_MAX_RESPONSE_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => finish(undefined, { status, headers: flatHeaders(res.headers), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => finish(new AgentError('DRIVER_ERROR', `${what}: ${err.message}`)));
    });
    outgoing.on('error', (err) => finish(new AgentError('DRIVER_ERROR', `${what}: ${err.message}`)));
    outgoing.end(body);
  });
}

/** Response headers as single strings; `set-cookie` never leaves the site (it could carry the machine's session). */
function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === 'set-cookie') continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
