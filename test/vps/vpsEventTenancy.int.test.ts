import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { instancePayload, provisionMetalPool, quotaOf } from './vpsPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The subjects of the first `count` SSE batches; `connected` once the stream is open. */
function streamSubjects(url: string, count: number, headers: Record<string, string>) {
  let onConnected!: () => void;
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  const subjects = new Promise<string[]>((resolve, reject) => {
    const seen: string[] = [];
    const req = request(url, { headers }, (res) => {
      let buffer = '';
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.startsWith(': connected')) onConnected();
          const data = /^event: events$/m.test(frame) ? /^data: (.*)$/m.exec(frame)?.[1] : undefined;
          if (data) seen.push((JSON.parse(data) as { subject: string }).subject);
          if (seen.length === count) {
            req.destroy();
            resolve(seen);
          }
        }
      });
    });
    req.on('error', (err) => (err.message.includes('aborted') ? undefined : reject(err)));
    req.end();
  });
  return { connected, subjects };
}

describe('vps event tenancy', () => {
  it('shows a tenant the events of its own tenant and instances, in history and on the stream, and none of another tenant', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    await provisionMetalPool(bus, { 'tenant-a': quotaOf(2, 4, 8_192, 100), 'tenant-b': quotaOf(2, 4, 8_192, 100) });
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const a = await token('tenant-a-token', 'tenant-a');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const live = streamSubjects(`http://127.0.0.1:${port}/v1/events/stream?subject=bc.evt.vps.>`, 3, bearer(a));
    await live.connected;

    const run = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
    await run('vps.createInstance', instancePayload('tenant-a', 'a-web'));
    await run('vps.createInstance', instancePayload('tenant-b', 'b-db'));
    await run('vps.recordInstanceObserved', { instanceId: 'b-db', tenantId: 'tenant-b', observed: 'provisioning' });
    await run('vps.recordInstanceObserved', { instanceId: 'a-web', tenantId: 'tenant-a', observed: 'provisioning' });
    await run('vps.stopInstance', { instanceId: 'b-db', tenantId: 'tenant-b' });
    await run('vps.stopInstance', { instanceId: 'a-web', tenantId: 'tenant-a' });

    expect(await live.subjects).toEqual(['bc.evt.vps.tenant.tenant-a', 'bc.evt.vps.instance.a-web', 'bc.evt.vps.instance.a-web']);
    const history = async (aggregate: string) => {
      const res = await app.inject({ url: `/v1/events?aggregate=${aggregate}`, headers: bearer(a) });
      return { status: res.statusCode, types: res.statusCode === 200 ? (res.json().items as { type: string }[]).map((e) => e.type) : res.json().code };
    };
    expect(await history('vps.tenant/tenant-a')).toEqual({ status: 200, types: ['TenantCreated', 'TenantQuotaSet', 'InstanceRequested'] });
    expect(await history('vps.instance/a-web')).toEqual({ status: 200, types: ['InstanceObserved', 'InstanceDesiredStateSet'] });
    for (const aggregate of ['vps.tenant/tenant-b', 'vps.instance/b-db', 'vps.pool/metal-a', 'vps.flavor/small']) {
      expect(await history(aggregate), aggregate).toEqual({ status: 404, types: 'NOT_FOUND' });
    }
    // The operator sees the other tenant's history.
    expect((await app.inject({ url: '/v1/events?aggregate=vps.instance/b-db' })).json().items).toHaveLength(2);
  });
});
