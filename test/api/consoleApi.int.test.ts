import { describe, expect, it } from 'vitest';
import { deployPayload } from '../metal/engineFixture.ts';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The read-only shapes the web console needs, as API routes anyone with the right token can use. */
describe('API routes the console reads', () => {
  it('counts nodes by state per site with maintenance, capacity waits and failures, and answers who a token is', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    for (const siteId of ['dc1', 'dc2']) await bus.execute({ name: 'site.create', payload: { siteId, name: siteId }, actor: 'test' });
    const ready = async (nodeId: string, siteId: string) => {
      await bus.execute({ name: 'metal.enroll', payload: enrollPayload(nodeId, siteId), actor: 'test' });
      const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId }, actor: 'test' });
      const workflowId = (inspection.events[0]!.data as { workflowId: string }).workflowId;
      await bus.execute({ name: 'metal.completeOperation', payload: { nodeId, workflowId }, actor: 'test' });
    };
    for (const nodeId of ['a1', 'a2', 'a3', 'a4']) await ready(nodeId, 'dc1');
    await ready('b1', 'dc2');
    await bus.execute({ name: 'metal.enroll', payload: enrollPayload('b2', 'dc2'), actor: 'test' });
    const tenantToken = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'acme-token', role: 'tenant', tenantId: 'acme' } })).json()
      .token as string;
    // a1 waits for a deploy slot (no orchestrator here), a2 fails its deploy into maintenance, a3 is in maintenance.
    expect((await app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody('a1'), headers: bearer(tenantToken) })).statusCode).toBe(
      201,
    );
    const failing = await bus.execute({ name: 'metal.deploy', payload: deployBody('a2'), actor: 'test' });
    const failingWorkflow = (failing.events[0]!.data as { workflowId: string }).workflowId;
    await bus.execute({
      name: 'metal.failOperation',
      payload: { nodeId: 'a2', workflowId: failingWorkflow, reason: 'image.write: checksum mismatch', failedStep: 'image.write' },
      actor: 'test',
    });
    const last = await bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'a3', on: true, reason: 'fan' }, actor: 'test' });

    const summary = (await app.inject({ url: `/v1/fleet/summary?minSeq=${last.seq}` })).json();
    const zero = {
      enrolled: 0,
      inspecting: 0,
      ready: 0,
      deploying: 0,
      deployed: 0,
      releasing: 0,
      wiping: 0,
      rescuing: 0,
      remediating: 0,
      rescue: 0,
      failed: 0,
      retiring: 0,
      retired: 0,
    };
    expect(summary.sites).toEqual([
      { siteId: 'dc1', total: 4, byState: { ...zero, ready: 2, deploying: 1, failed: 1 }, maintenance: 1, waitingForCapacity: 1, failed: 1 },
      { siteId: 'dc2', total: 2, byState: { ...zero, ready: 1, enrolled: 1 }, maintenance: 0, waitingForCapacity: 0, failed: 0 },
    ]);
    expect(summary.fleet).toEqual({
      total: 6,
      byState: { ...zero, ready: 3, deploying: 1, failed: 1, enrolled: 1 },
      maintenance: 1,
      waitingForCapacity: 1,
      failed: 1,
    });
    expect(summary.seq).toBeGreaterThanOrEqual(last.seq);
    // A tenant counts its own nodes only.
    const own = (await app.inject({ url: '/v1/fleet/summary', headers: bearer(tenantToken) })).json();
    expect(own.fleet).toMatchObject({ total: 1, byState: { ...zero, deploying: 1 } });
    expect(own.sites.map((s: { siteId: string }) => s.siteId)).toEqual(['dc1']);

    // Node lists filter by tenant (an operator's choice; a tenant's own always) as by site and state.
    const byTenant = (await app.inject({ url: '/v1/nodes?tenantId=acme' })).json();
    expect(byTenant.items.map((n: { nodeId: string }) => n.nodeId)).toEqual(['a1']);
    expect(
      (await app.inject({ url: '/v1/nodes?tenantId=someone-else', headers: bearer(tenantToken) })).json().items.map((n: { nodeId: string }) => n.nodeId),
    ).toEqual(['a1']);
    expect((await app.inject({ url: '/v1/nodes?poolId=none-such' })).json().items).toEqual([]);

    expect((await app.inject({ url: '/v1/session' })).json()).toEqual({ tokenId: 'bootstrap-admin', role: 'admin', tenantId: null });
    expect((await app.inject({ url: '/v1/session', headers: bearer(tenantToken) })).json()).toEqual({
      tokenId: 'acme-token',
      role: 'tenant',
      tenantId: 'acme',
    });
    const anonymous = await app.inject({ url: '/v1/session', headers: { authorization: '' } });
    expect([anonymous.statusCode, anonymous.json().code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it("folds a node's history at any instant, and a tenant sees only the part since it took the node on", { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
    const enrolled = await bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
    const inspection = await bus.execute({ name: 'metal.startInspection', payload: { nodeId: 'n1' }, actor: 'test' });
    const inspectWorkflow = (inspection.events[0]!.data as { workflowId: string }).workflowId;
    const inspected = await bus.execute({ name: 'metal.completeOperation', payload: { nodeId: 'n1', workflowId: inspectWorkflow }, actor: 'test' });
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const [acme, globex] = [await token('acme-token', 'acme'), await token('globex-token', 'globex')];
    const deploy = await app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody('n1'), headers: bearer(acme) });
    const deploySeq = deploy.json().seq as number;
    await env.readers.get('nodes')!.waitFor(deploySeq, 5_000);

    const history = (at?: string | number, auth = {}) =>
      app.inject({ url: `/v1/nodes/n1/history${at === undefined ? '' : `?at=${encodeURIComponent(String(at))}`}`, headers: auth });
    const now = (await history()).json();
    expect(now.node).toMatchObject({ nodeId: 'n1', state: 'deploying', operation: 'deploy', tenantId: 'acme' });
    expect(now.timeline.map((e: { state: string }) => e.state)).toEqual(['enrolled', 'inspecting', 'ready', 'deploying']);
    expect((await history(enrolled.seq)).json().node.state).toBe('enrolled');
    expect((await history(inspected.seq)).json()).toMatchObject({ at: { seq: inspected.seq }, node: { state: 'ready', tenantId: null } });
    const inspectedAt = now.timeline[2].time as string;
    expect((await history(inspectedAt)).json().node.state).toBe('ready');

    const mine = (await history(undefined, bearer(acme))).json();
    expect(mine.timeline.map((e: { seq: number; state: string }) => [e.seq, e.state])).toEqual([[deploySeq, 'deploying']]);
    const beforeOwnership = await history(inspected.seq, bearer(acme));
    expect([beforeOwnership.statusCode, beforeOwnership.json().code]).toEqual([404, 'NOT_FOUND']);
    const foreign = await history(undefined, bearer(globex));
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'NOT_FOUND']);
    const unknown = await app.inject({ url: '/v1/nodes/nobody/history' });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'NOT_FOUND']);
    const bad = await history('yesterday');
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('lists workflows newest first, by state, page by page', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    const { nodeId: _n, ...inputs } = deployPayload('n1');
    let last = 0;
    for (const [i, nodeId] of ['n1', 'n2', 'n3'].entries()) {
      const workflowId = `wf-00000000000${i + 1}`;
      last = (await bus.execute({ name: 'workflow.start', payload: { workflowId, nodeId, siteId: 'dc1', operation: 'deploy', inputs }, actor: 'test' })).seq;
      // started_at has millisecond resolution: keep the order unambiguous.
      await new Promise((r) => setTimeout(r, 5));
    }
    const first = (await app.inject({ url: `/v1/workflows?limit=2&minSeq=${last}` })).json();
    expect(first.items.map((w: { workflowId: string }) => w.workflowId)).toEqual(['wf-000000000003', 'wf-000000000002']);
    expect(first.items[0].steps.length).toBeGreaterThan(0);
    const second = (await app.inject({ url: `/v1/workflows?limit=2&cursor=${first.nextCursor}` })).json();
    expect([second.items.map((w: { workflowId: string }) => w.workflowId), second.nextCursor]).toEqual([['wf-000000000001'], null]);
    expect((await app.inject({ url: '/v1/workflows?state=running' })).json().items).toHaveLength(3);
    expect((await app.inject({ url: '/v1/workflows?state=failed' })).json().items).toEqual([]);
    const forged = await app.inject({ url: `/v1/workflows?cursor=${Buffer.from('not json').toString('base64url')}` });
    expect([forged.statusCode, forged.json().code]).toEqual([400, 'VALIDATION_FAILED']);
    // Fleet-wide workflow lists are not a tenant's to read.
    const tenant = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 't', role: 'tenant', tenantId: 't' } })).json().token as string;
    expect((await app.inject({ url: '/v1/workflows', headers: bearer(tenant) })).statusCode).toBe(404);
  });
});
