import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

type Op = { operation: string; started: number; completed: number; failed: number; cancelled: number };
type Capacity = { requested: number; admitted: number; peakWaiting: number; waiting: number };
type Trends = {
  tenantId: string | null;
  operations: Op[];
  failures: { code: string; workflows: number; steps: number }[];
  stepTotals: { stepId: string; count: number }[];
  capacity: Capacity[];
};

/** Summed over the hours, so a run across the top of an hour (its events in two buckets) reads the same. */
const started = (view: Trends) => view.operations.reduce((n, o) => n + o.started, 0);
const failed = (view: Trends) => view.operations.reduce((n, o) => n + o.failed, 0);
const queue = (view: Trends) => view.capacity.reduce((sum, c) => [sum[0]! + c.requested, sum[1]! + c.admitted, Math.max(sum[2]!, c.peakWaiting)], [0, 0, 0]);

describe('GET /v1/trends for a tenant', () => {
  it("answers each tenant with its own operations' figures only, and staff with everyone's", { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { bus, app } = env;
    const run = async (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    for (const nodeId of ['a1', 'b1', 'o1']) {
      await run('metal.enroll', enrollPayload(nodeId));
      const inspection = await run('metal.startInspection', { nodeId });
      await run('metal.completeOperation', { nodeId, workflowId: (inspection.events[0]!.data as { workflowId: string }).workflowId });
    }
    const token = async (tokenId: string, tenantId: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
    const acme = { authorization: `Bearer ${await token('acme-token', 'acme')}` };
    const globex = { authorization: `Bearer ${await token('globex-token', 'globex')}` };
    // Each tenant deploys a node of its own; an operator deploys one for no tenant.
    const deploy = async (nodeId: string, headers?: Record<string, string>) => {
      const res = await app.inject({ method: 'POST', url: '/v1/commands/metal.deploy', payload: deployBody(nodeId), ...(headers ? { headers } : {}) });
      expect(res.statusCode).toBe(201);
      const workflowId = (res.json().events[0].data as { workflowId: string }).workflowId;
      const start = await run('workflow.start', { workflowId, nodeId, siteId: 'dc1', operation: 'deploy', inputs: deployBody(nodeId) });
      const steps = (start.events.find((e) => e.type === 'WorkflowStarted')!.data as { steps: { id: string }[] }).steps;
      await run('workflow.startStep', { workflowId, stepIndex: 0, attempt: 1, nonce: `${nodeId}`.padEnd(22, 'n') });
      return { workflowId, firstStep: steps[0]!.id };
    };
    const a = await deploy('a1', acme);
    const b = await deploy('b1', globex);
    await deploy('o1');
    // acme's fails for good at its first step; globex's first step succeeds.
    await run('workflow.failStep', { workflowId: a.workflowId, stepIndex: 0, attempt: 1, code: 'DRIVER_ERROR', message: 'the BMC said no', retryable: false });
    const last = await run('workflow.completeStep', { workflowId: b.workflowId, stepIndex: 0, attempt: 1, output: { ok: true } });

    const trends = async (headers: Record<string, string> | undefined, query = '') => {
      const res = await app.inject({ method: 'GET', url: `/v1/trends?minSeq=${last.seq}${query}`, ...(headers ? { headers } : {}) });
      expect(res.statusCode).toBe(200);
      return res.json<Trends>();
    };
    const ofAcme = await trends(acme);
    expect(ofAcme.tenantId).toBe('acme');
    expect([started(ofAcme), failed(ofAcme)]).toEqual([1, 1]);
    expect(ofAcme.failures.map((f) => [f.code, f.workflows, f.steps])).toEqual([['DRIVER_ERROR', 1, 1]]);
    expect(ofAcme.stepTotals).toEqual([]);
    expect(queue(ofAcme)).toEqual([1, 1, 1]);

    const ofGlobex = await trends(globex, '&site=dc1');
    expect(ofGlobex.tenantId).toBe('globex');
    expect([started(ofGlobex), failed(ofGlobex)]).toEqual([1, 0]);
    expect(ofGlobex.failures).toEqual([]);
    expect(ofGlobex.stepTotals.map((s) => [s.stepId, s.count])).toEqual([[b.firstStep, 1]]);
    expect(queue(ofGlobex)).toEqual([1, 1, 1]);

    // Staff (the bootstrap admin here) see the site whole: three deploys through the queue, one at a time.
    const all = await trends(undefined);
    expect(all.tenantId).toBeNull();
    expect([started(all), failed(all)]).toEqual([3, 1]);
    expect(queue(all)).toEqual([3, 3, 1]);
    // A tenant cannot widen its view with a parameter: none names a tenant, an unknown one changes nothing.
    const widened = await trends(acme, '&tenantId=globex');
    expect([widened.tenantId, started(widened)]).toEqual(['acme', 1]);
  });
});
