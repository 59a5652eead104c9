import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

const { nodeId: _unused, ...deploy } = deployBody('x');

/** A site with three ready nodes: free-1 and free-2 free, held-1 deployed by another tenant. */
async function poolFixture() {
  const env = await startApi();
  const { bus, app } = env;
  await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  for (const nodeId of ['free-1', 'free-2', 'held-1']) {
    await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId), actor: 'test' });
    const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
    const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
    await bus.execute({ name: 'metal.completeOperation', payload: { nodeId, workflowId }, actor: 'test' });
  }
  const held = await bus.execute({ name: 'metal.deploy', payload: { ...deployBody('held-1'), tenantId: 'globex' }, actor: 'test' });
  const token = async (tokenId: string, role: string, tenantId?: string) =>
    (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role, ...(tenantId ? { tenantId } : {}) } })).json().token as string;
  const as = (t: string) => ({ authorization: `Bearer ${t}` });
  return { env, token, as, seq: held.seq };
}

describe('free pool for tenants', () => {
  it('shows a tenant what it may take, grouped with no node id, and gives it the lowest free node on allocate', { timeout: 60_000 }, async () => {
    const { env, token, as, seq } = await poolFixture();
    await using _env = env;
    const acme = await token('acme', 'tenant', 'acme');
    const offers = await env.app.inject({ method: 'GET', url: `/v1/pool/offers?minSeq=${seq}`, headers: as(acme) });
    expect(offers.statusCode).toBe(200);
    expect(offers.json()).toEqual({ items: [{ siteId: 'dc1', poolId: null, hardwareProfile: 'default', available: 2 }] });
    expect(offers.body).not.toMatch(/free-1|held-1/);

    const taken = await env.app.inject({
      method: 'POST',
      url: `/v1/pool/allocate?minSeq=${seq}`,
      headers: as(acme),
      payload: { siteId: 'dc1', hardwareProfile: 'default', deploy },
    });
    expect(taken.statusCode).toBe(201);
    expect(taken.json()).toMatchObject({ nodeId: 'free-1' });
    const node = await env.app.inject({ method: 'GET', url: `/v1/nodes/free-1?minSeq=${taken.json().seq}`, headers: as(acme) });
    expect(node.json()).toMatchObject({ state: 'deploying', tenantId: 'acme' });
  });

  it('refuses a tenant naming another tenant in the deploy body, and a viewer altogether', { timeout: 60_000 }, async () => {
    const { env, token, as, seq } = await poolFixture();
    await using _env = env;
    const acme = await token('acme', 'tenant', 'acme');
    const viewer = await token('v', 'viewer');
    const body = { siteId: 'dc1', hardwareProfile: 'default', deploy: { ...deploy, tenantId: 'globex' } };
    const named = await env.app.inject({ method: 'POST', url: `/v1/pool/allocate?minSeq=${seq}`, headers: as(acme), payload: body });
    expect(named.statusCode).toBe(400);
    expect(named.json().code).toBe('VALIDATION_FAILED');
    const byViewer = await env.app.inject({ method: 'POST', url: `/v1/pool/allocate?minSeq=${seq}`, headers: as(viewer), payload: { ...body, deploy } });
    expect(byViewer.json().code).toBe('FORBIDDEN');
  });

  it('answers PRECONDITION_FAILED when the offer has nothing left', { timeout: 60_000 }, async () => {
    const { env, token, as, seq } = await poolFixture();
    await using _env = env;
    const acme = await token('acme', 'tenant', 'acme');
    const take = () =>
      env.app.inject({
        method: 'POST',
        url: `/v1/pool/allocate?minSeq=${seq}`,
        headers: as(acme),
        payload: { siteId: 'dc1', hardwareProfile: 'default', deploy },
      });
    expect((await take()).statusCode).toBe(201);
    const second = await take();
    // The read model may not have folded the first deploy yet: free-1 answers as already deploying, and free-2 is taken.
    expect(second.statusCode).toBe(201);
    expect(second.json().nodeId).toBe('free-2');
    const third = await take();
    expect(third.statusCode).toBe(422);
    expect(third.json().code).toBe('PRECONDITION_FAILED');
  });
});
