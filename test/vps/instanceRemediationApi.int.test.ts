import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { registrationOf } from '../../plugins/sdk/definePlugin.ts';
import { startApi } from '../support/apiFixture.ts';
import { instanceProbePlugin } from './instanceRemediationFixture.ts';
import { instancePayload, provisionMetalPool, quotaOf } from './vpsPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));

describe('vps.remediateInstance over HTTP', () => {
  it('lets a tenant token remediate its own instance only, and documents the route in OpenAPI', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    const { app } = env;
    await provisionMetalPool(env.bus, { 't-a': quotaOf(2, 4, 8_192, 100), 't-b': quotaOf(2, 4, 8_192, 100) });
    await env.bus.execute({ name: 'plugins.register', payload: registrationOf(instanceProbePlugin), actor: 'test' });
    for (const [tenantId, instanceId] of [
      ['t-a', 'a-web'],
      ['t-b', 'b-web'],
    ] as const) {
      await env.bus.execute({ name: 'vps.createInstance', payload: instancePayload(tenantId, instanceId), actor: 'test' });
      await env.bus.execute({ name: 'vps.recordInstanceObserved', payload: { tenantId, instanceId, observed: 'running' }, actor: 'engine' });
    }
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const a = await token('t-a-token', 't-a');
    const remediate = async (body: object, auth?: string) => {
      const res = await app.inject({ method: 'POST', url: '/v1/commands/vps.remediateInstance', payload: body, ...(auth ? { headers: bearer(auth) } : {}) });
      return { status: res.statusCode, body: res.json<{ code?: string; events?: Array<{ type: string; data: Record<string, unknown> }> }>() };
    };

    // The API writes the tenant in: a tenant token names no tenant, and reaches its own instance.
    const own = await remediate({ instanceId: 'a-web', profile: 'instance-probe' }, a);
    expect([own.status, own.body.events?.[0]?.type, own.body.events?.[0]?.data.tenantId]).toEqual([201, 'InstanceRemediationRequested', 't-a']);
    // Another tenant's instance is not found, as if it did not exist; naming the other tenant is forbidden.
    expect(await remediate({ instanceId: 'b-web', profile: 'instance-probe' }, a)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(await remediate({ tenantId: 't-b', instanceId: 'b-web', profile: 'instance-probe' }, a)).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    // While its remediation runs, the tenant's instance is busy, with the stable code.
    expect(await remediate({ instanceId: 'a-web', profile: 'instance-broken' }, a)).toMatchObject({ status: 409, body: { code: 'INSTANCE_BUSY' } });
    // An operator names the tenant; `better-compute vps remediate` is that request (one process start: the CLI's own wiring).
    await app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, '--api', api, 'vps', 'remediate', 'b-web', '--tenant', 't-b', '--profile', 'instance-probe'],
      { env: { ...process.env, BC_DATA_DIR: env.dataDir, BC_API_TOKEN: '' } },
    );
    expect(stdout).toMatch(/vps.remediateInstance: InstanceRemediationRequested \(seq \d+\)/);
    // The engine's ends of a remediation are not operator or tenant commands.
    const end = await app.inject({ method: 'POST', url: '/v1/commands/vps.completeRemediation', payload: {}, headers: bearer(a) });
    expect(end.statusCode).toBe(403);

    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const route = doc.paths['/v1/commands/vps.remediateInstance'].post;
    expect(Object.keys(route.requestBody.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['tenantId', 'instanceId', 'profile', 'allowDestructive']),
    );
    expect(doc.paths['/v1/commands/vps.completeRemediation']).toBeUndefined();
  });
});
