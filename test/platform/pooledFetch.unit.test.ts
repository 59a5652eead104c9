import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pooledFetch } from '../../services/platform/http/pooledFetch.ts';

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** A server that echoes what it was sent, redirects, answers without a body, and hangs on request. */
let server: Server;
let base: string;
const pool = new Agent({ connections: 4 });
const fetchPooled = pooledFetch(pool);

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      if (req.url === '/moved') return res.writeHead(302, { location: '/echo' }).end();
      if (req.url === '/empty') return res.writeHead(204).end();
      if (req.url === '/hang') return;
      res.writeHead(201, [
        ['content-type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      res.end(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null, body }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await pool.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('pooledFetch', () => {
  it('answers a standard Response with the status, every header and the body, sending method, headers and body', async () => {
    const res = await fetchPooled(`${base}/echo`, { method: 'post', headers: { authorization: 'Bearer t' }, body: '{"a":1}' });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ method: 'POST', url: '/echo', authorization: 'Bearer t', body: '{"a":1}' });
  });

  it('takes Headers and URL objects, follows redirects, and gives no body for 204', async () => {
    const moved = await fetchPooled(new URL('/moved', base), { headers: new Headers({ authorization: 'Bearer h' }) });
    expect(await moved.json()).toMatchObject({ method: 'GET', url: '/echo', authorization: 'Bearer h' });
    const empty = await fetchPooled(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it("rejects like fetch: TypeError('fetch failed') when nothing listens, the signal's reason on abort", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(fetchPooled(`http://127.0.0.1:${port}/`)).rejects.toThrow(new TypeError('fetch failed'));

    const abort = new AbortController();
    const hanging = fetchPooled(`${base}/hang`, { signal: abort.signal });
    const reason = new Error('stopping');
    setTimeout(() => abort.abort(reason), 50);
    await expect(hanging).rejects.toBe(reason);
  });

  it('leaves no listener behind on a signal every request shares (the global fetch keeps one per request until it is collected)', async () => {
    const account = new AbortController();
    for (let i = 0; i < 20; i++) {
      await (await fetchPooled(`${base}/echo`, { signal: account.signal })).text();
      expect(getEventListeners(account.signal, 'abort').length).toBeLessThanOrEqual(1);
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(account.signal, 'abort')).toHaveLength(0);
  });

  it('reads a body once, by any reader, and hands out the stream, a blob or a clone as a Response of its own would', async () => {
    const once = await fetchPooled(`${base}/echo`);
    expect(once.bodyUsed).toBe(false);
    expect(new TextDecoder().decode(await once.arrayBuffer())).toContain('"url":"/echo"');
    expect(once.bodyUsed).toBe(true);
    await expect(once.text()).rejects.toThrow(TypeError);
    await expect(once.json()).rejects.toThrow(TypeError);
    expect(() => once.clone()).toThrow(TypeError);

    const streamed = await fetchPooled(`${base}/echo`);
    const copy = streamed.clone();
    const chunks: Uint8Array[] = [];
    for await (const chunk of streamed.body!) chunks.push(chunk);
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({ url: '/echo' });
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.text()).rejects.toThrow(TypeError);
    expect(await (await copy.blob()).text()).toContain('"url":"/echo"');
    expect(copy.headers.get('content-type')).toBe('application/json');
    expect(copy.status).toBe(201);
  });

  it('hands what it does not carry to the global fetch: a Request object', async () => {
    const res = await fetchPooled(new Request(`${base}/echo`, { method: 'PUT', body: 'x' }));
    expect(await res.json()).toMatchObject({ method: 'PUT', body: 'x' });
  });
});
