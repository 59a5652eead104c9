import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const key = (k: string) => ({ 'idempotency-key': k });

async function readyNodes(env: Awaited<ReturnType<typeof startApi>>, nodeIds: string[]) {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  for (const nodeId of nodeIds) {
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
    const inspection = await env.bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
    const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
    await env.bus.execute({ name: 'metal.completeOperation', payload: { nodeId, workflowId }, actor: 'test' });
  }
}

describe('Idempotency-Key', () => {
  it("tenants sharing a key received each other's events (regression): each caller's key is its own and both commands run", async () => {
    await using env = await startApi();
    const { app } = env;
    await readyNodes(env, ['acme-node', 'globex-node']);
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const acme = await token('acme-token', 'acme');
    const globex = await token('globex-token', 'globex');
    const deploy = (nodeId: string, t: string, body: object = {}) =>
      app.inject({
        method: 'POST',
        url: '/v1/commands/metal.deploy',
        payload: { ...deployBody(nodeId), userData: 'acme-secret-user-data', ...body },
        headers: { ...bearer(t), ...key('deploy-key-0001') },
      });

    const first = await deploy('acme-node', acme);
    const second = await deploy('globex-node', globex, { userData: 'globex-user-data' });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(second.json().commandId).not.toBe(first.json().commandId);
    expect(second.json().events[0].data).toMatchObject({ nodeId: 'globex-node', tenantId: 'globex' });
    expect(JSON.stringify(second.json())).not.toContain('acme');
    const globexNode = await app.inject({ url: `/v1/nodes/globex-node?minSeq=${second.json().seq}` });
    expect(globexNode.json()).toMatchObject({ state: 'deploying', tenantId: 'globex' });

    // A retry answers that caller's own command, and only its events.
    const retry = await deploy('acme-node', acme);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ commandId: first.json().commandId, seq: first.json().seq, duplicate: true, events: first.json().events });
  });

  it.each([
    ['another aggregate', { url: '/v1/commands/site.create', payload: { siteId: 'dc8', name: 'DC 8' } }],
    ['another command', { url: '/v1/commands/metal.setMaintenance', payload: { nodeId: 'n1', on: true, reason: 'disk' } }],
    ['another body', { url: '/v1/commands/site.create', payload: { siteId: 'dc9', name: 'another name' } }],
  ])('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with %s, and appends nothing', async (_what, reuse) => {
    await using env = await startApi();
    await readyNodes(env, ['n1']);
    const original = await env.app.inject({
      method: 'POST',
      url: '/v1/commands/site.create',
      payload: { siteId: 'dc9', name: 'DC 9' },
      headers: key('reused-key-0001'),
    });
    expect(original.statusCode).toBe(201);
    const before = await env.store.streamLastSequence();
    const res = await env.app.inject({ method: 'POST', ...reuse, headers: key('reused-key-0001') });
    expect([res.statusCode, res.json().code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect(JSON.stringify(res.json())).not.toContain('SiteCreated');
    expect(await env.store.streamLastSequence()).toBe(before);
  });

  it('a secret delete answered deleted: true and deleted nothing, and a put answered 500, on a reused key (regression): both answer 409', async () => {
    await using env = await startApi();
    const { app } = env;
    const put = (secretId: string, value: string) =>
      app.inject({ method: 'PUT', url: `/v1/secrets/${secretId}`, payload: { kind: 'generic', value }, headers: key('secret-key-0001') });
    const first = await put('alpha', 'v1');
    expect(first.statusCode).toBe(201);
    const retried = await put('alpha', 'v1');
    expect([retried.statusCode, retried.json()]).toEqual([200, { ...first.json(), duplicate: true }]);

    const del = await app.inject({ method: 'DELETE', url: '/v1/secrets/alpha', headers: key('secret-key-0001') });
    expect([del.statusCode, del.json().code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect([(await put('beta', 'v1')).statusCode, (await put('beta', 'v1')).json().code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await put('alpha', 'another value')).json().code).toBe('IDEMPOTENCY_KEY_REUSED');

    const last = await env.store.streamLastSequence();
    const secret = await app.inject({ url: `/v1/secrets/alpha?minSeq=${last}` });
    expect(secret.json()).toMatchObject({ secretId: 'alpha', version: 1 });
    expect((await app.inject({ url: `/v1/secrets/beta?minSeq=${last}` })).statusCode).toBe(404);
    // With a key of its own the delete really deletes, and says so.
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/secrets/alpha', headers: key('secret-key-0002') });
    expect(deleted.json()).toMatchObject({ deleted: true });
  });
});
