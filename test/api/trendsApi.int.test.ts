import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

describe('GET /v1/trends', () => {
  it('answers a viewer with the hour of a deploy the engine started, ran a step of and failed; not a tenant it was not for', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { bus, app } = env;
    const run = async (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await run('metal.enroll', enrollPayload('n1'));
    const inspection = await run('metal.startInspection', { nodeId: 'n1' });
    await run('metal.completeOperation', { nodeId: 'n1', workflowId: (inspection.events[0]!.data as { workflowId: string }).workflowId });
    // What the orchestrator and executor would send for a deploy whose first step works and whose second fails for good.
    const requested = await run('metal.deploy', deployBody('n1'));
    const workflowId = (requested.events[0]!.data as { workflowId: string }).workflowId;
    const started = await run('workflow.start', { workflowId, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', inputs: deployBody('n1') });
    const steps = (started.events.find((e) => e.type === 'WorkflowStarted')!.data as { steps: { id: string }[] }).steps;
    await run('workflow.startStep', { workflowId, stepIndex: 0, attempt: 1, nonce: 'n'.repeat(22) });
    await run('workflow.completeStep', { workflowId, stepIndex: 0, attempt: 1, output: { ok: true } });
    await run('workflow.startStep', { workflowId, stepIndex: 1, attempt: 1, nonce: 'm'.repeat(22) });
    const failed = await run('workflow.failStep', { workflowId, stepIndex: 1, attempt: 1, code: 'DRIVER_ERROR', message: 'the BMC said no', retryable: false });
    expect(failed.events.map((e) => e.type)).toContain('WorkflowFailed');

    const token = async (tokenId: string, role: string, tenantId?: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role, ...(tenantId ? { tenantId } : {}) } })).json().token as string;
    const viewer = { authorization: `Bearer ${await token('v', 'viewer')}` };
    const res = await app.inject({ method: 'GET', url: `/v1/trends?site=dc1&minSeq=${failed.seq}`, headers: viewer });
    expect(res.statusCode).toBe(200);
    const view = res.json();
    const now = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    expect(view.hours).toHaveLength(24);
    expect(view.hours.at(-1)).toBe(now);
    // Summed over the hours, so a run across the top of an hour (its events in two buckets) reads the same.
    const total = <T extends { hour: string }>(rows: T[], key: (r: T) => string, count: (r: T) => number[]) => {
      const sums = new Map<string, number[]>();
      for (const r of rows)
        sums.set(
          key(r),
          count(r).map((n, i) => n + (sums.get(key(r))?.[i] ?? 0)),
        );
      return Object.fromEntries(sums);
    };
    // The inspection never had a WorkflowStarted (no orchestrator here): only the deploy's workflow counts.
    type Op = { hour: string; operation: string; started: number; completed: number; failed: number; cancelled: number };
    expect(
      total(
        view.operations as Op[],
        (o) => o.operation,
        (o) => [o.started, o.completed, o.failed, o.cancelled],
      ),
    ).toEqual({ deploy: [1, 0, 1, 0] });
    type Failure = { hour: string; code: string; workflows: number; steps: number };
    expect(
      total(
        view.failures as Failure[],
        (f) => f.code,
        (f) => [f.workflows, f.steps],
      ),
    ).toEqual({ DRIVER_ERROR: [1, 1] });
    type Capacity = { hour: string; requested: number; admitted: number; peakWaiting: number; waiting: number };
    expect(
      total(
        view.capacity as Capacity[],
        () => 'all',
        (c) => [c.requested, c.admitted],
      ),
    ).toEqual({ all: [1, 1] });
    expect(Math.max(...(view.capacity as Capacity[]).map((c) => c.peakWaiting))).toBe(1);
    expect(view.capacity.at(-1).waiting).toBe(0);
    expect(view.stepTotals).toEqual([expect.objectContaining({ stepId: steps[0]!.id, count: 1, bytes: 0, bytesPerSecond: null })]);
    expect(view.seq).toBeGreaterThanOrEqual(failed.seq);

    // Another site has none of it; a tenant with no operations has no figures (not the site's); a backwards range is refused.
    const other = await app.inject({ method: 'GET', url: `/v1/trends?site=dc2&minSeq=${failed.seq}`, headers: viewer });
    expect(other.json()).toMatchObject({ siteId: 'dc2', operations: [], failures: [], stepTotals: [] });
    const tenant = await app.inject({ method: 'GET', url: '/v1/trends', headers: { authorization: `Bearer ${await token('t', 'tenant', 'acme')}` } });
    expect(tenant.statusCode).toBe(200);
    expect(tenant.json()).toMatchObject({ tenantId: 'acme', operations: [], failures: [], stepTotals: [] });
    const backwards = await app.inject({ method: 'GET', url: '/v1/trends?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', headers: viewer });
    expect(backwards.json().code).toBe('VALIDATION_FAILED');
    const openapi = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(openapi.paths)).toContain('/v1/trends');
  });
});
