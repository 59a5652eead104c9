import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { consoleRoutes } from '../../services/api/consoleRoutes.ts';
import { precompress } from '../../services/console/precompress.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { startApi } from '../support/apiFixture.ts';
import { tempDir } from '../support/natsServer.ts';

async function serving(root: string) {
  const app = Fastify();
  app.setErrorHandler((err, _req, reply) =>
    err instanceof PlatformError ? reply.code(err.status).send({ code: err.code, detail: err.message }) : reply.send(err),
  );
  await app.register(consoleRoutes, { root });
  return app;
}

describe('console routes', () => {
  it('serve hashed bundles for good, index.html for every console path, and leave /v1 paths to the API', async () => {
    using dir = tempDir('bc-console-root-');
    mkdirSync(join(dir.path, 'assets'));
    writeFileSync(join(dir.path, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(dir.path, 'assets', 'index-abc123.js'), 'console.log(1)');
    const app = await serving(dir.path);

    const bundle = await app.inject({ url: '/assets/index-abc123.js' });
    expect([bundle.statusCode, bundle.headers['cache-control'], bundle.body]).toEqual([200, 'public, max-age=31536000, immutable', 'console.log(1)']);
    for (const path of ['/', '/nodes', '/nodes/r1-n1?tab=history', '/approvals']) {
      const page = await app.inject({ url: path });
      expect([path, page.statusCode, page.headers['content-type'], page.headers['cache-control'], page.body]).toEqual([
        path,
        200,
        'text/html; charset=utf-8',
        'no-cache',
        '<!doctype html><title>console</title>',
      ]);
    }
    expect((await app.inject({ url: '/assets/missing.js' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/assets/../../etc/passwd' })).body).not.toContain('root:');
    const api = await app.inject({ url: '/v1/not-a-route' });
    expect([api.statusCode, api.json().code]).toEqual([404, 'NOT_FOUND']);
    await app.close();
  });

  it('send a bundle brotli- or gzip-compressed to a browser that accepts it, and plain to one that does not', async () => {
    using dir = tempDir('bc-console-compressed-');
    mkdirSync(join(dir.path, 'assets'));
    writeFileSync(join(dir.path, 'index.html'), '<!doctype html><title>console</title>');
    const source = `export const rows = [${Array.from({ length: 2_000 }, (_, i) => `'node-${i}'`).join(',')}];`;
    writeFileSync(join(dir.path, 'assets', 'index-abc123.js'), source);
    precompress(dir.path);
    const app = await serving(dir.path);
    const br = await app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect([br.headers['content-encoding'], brotliDecompressSync(br.rawPayload).toString()]).toEqual(['br', source]);
    expect(br.rawPayload.length).toBeLessThan(source.length / 4);
    const gz = await app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    expect([gz.headers['content-encoding'], gunzipSync(gz.rawPayload).toString()]).toEqual(['gzip', source]);
    const plain = await app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'identity' } });
    expect([plain.headers['content-encoding'], plain.body]).toEqual([undefined, source]);
    await app.close();
  });

  it('say how to build the console when it is not built', async () => {
    using dir = tempDir('bc-console-empty-');
    const app = await serving(dir.path);
    const res = await app.inject({ url: '/nodes' });
    expect([res.statusCode, res.json().code, res.json().detail]).toEqual([404, 'NOT_FOUND', expect.stringContaining('npm run build:console')]);
    await app.close();
  });

  it('need no token for the console, while every /v1 route but the public ones still does', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const noToken = { authorization: '' };
    const page = await env.app.inject({ url: '/nodes/r1-n1', headers: noToken });
    expect(page.statusCode).not.toBe(401);
    const api = await env.app.inject({ url: '/v1/nodes', headers: noToken });
    expect([api.statusCode, api.json().code]).toEqual([401, 'UNAUTHENTICATED']);
    const unknown = await env.app.inject({ url: '/v1/not-a-route' });
    expect([unknown.statusCode, unknown.headers['content-type'], unknown.json().code]).toEqual([404, 'application/problem+json; charset=utf-8', 'NOT_FOUND']);
  });
});
