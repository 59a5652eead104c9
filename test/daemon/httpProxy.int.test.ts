import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { proxyHttp } from '../../daemon/site/httpProxy.ts';

const certDir = new URL('../../daemon/simulator/bmc/certs/', import.meta.url);
const cert = readFileSync(new URL('bmc-sim-cert.pem', certDir));
const key = readFileSync(new URL('bmc-sim-key.pem', certDir));
const pin = createHash('sha256')
  .update(new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' }))
  .digest('base64');
const otherPin = createHash('sha256').update('another key').digest('base64');

const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
const handler = (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
    if (req.url === '/redirect') return res.writeHead(302, { location: 'https://169.254.169.254/' }).end();
    if (req.url === '/huge') return res.writeHead(200).end(Buffer.alloc(2 << 20, 0x61));
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session=abc' }).end(JSON.stringify({ version: '1.8.0' }));
  });
};
const https = createHttpsServer({ cert, key }, handler);
const http = createHttpServer(handler);
let httpsUrl = '';
let httpUrl = '';

beforeAll(async () => {
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  httpsUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(() => {
  https.close();
  http.close();
});

const request = (r: Record<string, unknown>) => HttpProxyRequest.parse(r);

describe('site agent: site.httpProxy', () => {
  it('answers a pinned https request with status and body, sends resolved secret headers, keeps cookies at the site', async () => {
    const answer = await proxyHttp(
      request({
        url: `${httpsUrl}/machine/version?x=1`,
        tlsSpkiSha256: pin,
        method: 'POST',
        body: '{"a":1}',
        headers: { 'X-Trace': 't1' },
        secretHeaders: { Authorization: 'secret:talos' },
        secretTicket: 't.k',
      }),
      'n1',
      async (ref, context) =>
        ref === 'secret:talos' && context.nodeId === 'n1' && context.ticket === 't.k' ? 'Bearer resolved-at-the-site' : Promise.reject(new Error('unknown')),
    );
    expect(answer).toMatchObject({ status: 200, body: '{"version":"1.8.0"}' });
    expect(answer.headers['set-cookie']).toBeUndefined();
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', url: '/machine/version?x=1', body: '{"a":1}' });
    expect(last.headers).toMatchObject({ authorization: 'Bearer resolved-at-the-site', 'x-trace': 't1' });
  });

  it('refuses a peer whose key is not the pinned one before sending anything', async () => {
    const before = seen.length;
    await expect(
      proxyHttp(request({ url: `${httpsUrl}/`, tlsSpkiSha256: otherPin, secretHeaders: { Authorization: 'secret:talos' } }), 'n1', async () => 'Bearer x'),
    ).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: expect.stringMatching(/pinned SPKI/),
    });
    expect(seen.length).toBe(before);
  });

  it('reports a redirect and an oversize answer as DRIVER_ERROR, and a secret header it cannot resolve as CREDENTIALS_MISSING', async () => {
    await expect(proxyHttp(request({ url: `${httpUrl}/redirect` }), 'n1', undefined)).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: expect.stringMatching(/redirect \(302\)/),
    });
    await expect(proxyHttp(request({ url: `${httpUrl}/huge` }), 'n1', undefined)).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      message: expect.stringMatching(/exceeds/),
    });
    await expect(proxyHttp(request({ url: `${httpUrl}/`, secretHeaders: { Authorization: 'secret:x' } }), 'n1', undefined)).rejects.toMatchObject({
      code: 'CREDENTIALS_MISSING',
    });
  });

  it('gives up on a machine that does not answer within the timeout', async () => {
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      await expect(proxyHttp(request({ url, timeoutMs: 300 }), 'n1', undefined)).rejects.toMatchObject({
        code: 'DRIVER_ERROR',
        message: expect.stringMatching(/no answer within 300 ms/),
      });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
