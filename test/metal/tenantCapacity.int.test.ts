import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { getNode } from '../../projections/nodes/queries.ts';
import { capsOf } from '../../services/workflow/config.ts';
import { deployPayload, enrollPayload, startEngine } from './engineFixture.ts';
import { startFakeAgent } from './fakeAgent.ts';

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('per-tenant caps', () => {
  it('holds a tenant at its own cap (set by command, no restart) while another tenant deploys at the same site, then runs it', async () => {
    await using env = await startEngine({ maxDeploysPerSite: 5, maxDeploysPerTenant: 5 });
    await using _agent = await startFakeAgent(env.nc, 'dc1', { delayMs: { 'image.write': 1_500 } });
    const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('vps.createTenant', { tenantId: 'acme', name: 'Acme' });
    // The orchestrator is running: acme's own cap reaches it through the log.
    await run('vps.setTenantCaps', { tenantId: 'acme', deploys: 1 });
    const nodes = ['t1', 't2', 'g1'];
    for (const id of nodes) await run('metal.enroll', enrollPayload(id));
    for (const id of nodes) await env.waitForNode(id, (s) => s.exists && s.state === 'ready');

    await run('metal.deploy', { ...deployPayload('t1'), tenantId: 'acme' });
    await run('metal.deploy', { ...deployPayload('t2'), tenantId: 'acme' });
    const last = await run('metal.deploy', { ...deployPayload('g1'), tenantId: 'globex' });

    // globex's deploy, asked after acme's second, starts beside acme's first: only t2 waits.
    const model = env.orchestrator.model;
    await until(
      't1 and g1 in flight, t2 waiting',
      () =>
        model.inFlight('dc1', 'deploys') === 2 &&
        model
          .waiting()
          .map((o) => o.nodeId)
          .join() === 't2',
    );
    expect(model.tenantInFlight('acme', 'deploys')).toBe(1);
    expect(model.tenantInFlight('globex', 'deploys')).toBe(1);
    const t2 = model.waiting()[0]!;
    expect(model.holdOf(t2.workflowId, capsOf(env.config))).toEqual({ cap: 'tenant', tenantId: 'acme', slot: 'deploys', inFlight: 1, limit: 1 });

    const readModel = env.readers.get('nodes')!;
    await readModel.waitFor(last.seq, 5_000);
    await until('the read model to see g1 started', () => getNode(readModel.db(), 'g1')?.waitingReason === null, 5_000);
    expect(getNode(readModel.db(), 't2', undefined, capsOf(env.config))).toMatchObject({
      state: 'deploying',
      waitingReason: 'waiting-for-capacity',
      waitingFor: 'tenant cap (1 of 1 deploys in flight for tenant acme)',
    });

    for (const id of nodes) await env.waitForNode(id, (s) => s.exists && s.state === 'deployed');
    expect(model.tenantInFlight('acme', 'deploys')).toBe(0);
    expect(model.waiting()).toEqual([]);
  });
});
