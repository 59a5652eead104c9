import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../schemas/events.ts';
import { cappedOperations, describeCapHold } from '../../schemas/metal/workflow.ts';
import { FleetModel, type Caps, type PendingOperation } from '../../services/processes/orchestrator/fleetModel.ts';

type Op = 'deploy' | 'release' | 'inspect';
const wf = (nodeId: string) => `wf-${nodeId.padStart(12, '0')}`;
const requested = (nodeId: string, operation: Op, siteId: string, tenantId?: string): PlatformEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId, siteId, operation, workflowId: wf(nodeId), inputs: {}, ...(tenantId ? { tenantId } : {}) },
});
const started = (nodeId: string, operation: Op, siteId: string): PlatformEvent => ({
  type: 'WorkflowStarted',
  data: {
    workflowId: wf(nodeId),
    nodeId,
    siteId,
    operation,
    profile: { id: operation, version: 1 },
    startedAt: 't',
    steps: [{ id: 'x', runsOn: 'site', params: {}, timeoutMs: 1, retry: { maxAttempts: 1, backoffMs: 0 }, destructive: false }],
  },
});
const completed = (nodeId: string): PlatformEvent => ({ type: 'WorkflowCompleted', data: { workflowId: wf(nodeId) } });
const tenantCaps = (tenantId: string, deploys: number | null, wipes: number | null): PlatformEvent => ({
  type: 'TenantCapsSet',
  data: { tenantId, deploys, wipes },
});
const ids = (ops: readonly PendingOperation[]) => ops.map((o) => o.nodeId);

describe('per-tenant caps in the fleet model', () => {
  const caps: Caps = { deploys: 5, wipes: 5, tenant: { deploys: 2 } };

  it('holds a tenant at its cap while another tenant at the same site starts, and admits the held tenant oldest first as its slots free', () => {
    const model = new FleetModel();
    // acme asks first, four times; globex's one deploy comes after all of them at the same site.
    for (const [node, tenant] of [
      ['a1', 'acme'],
      ['a2', 'acme'],
      ['a3', 'acme'],
      ['a4', 'acme'],
      ['g1', 'globex'],
    ] as const)
      model.apply(requested(node, 'deploy', 'dc1', tenant));
    expect(ids(model.admit(caps))).toEqual(['a1', 'a2', 'g1']);
    expect(model.tenantInFlight('acme', 'deploys')).toBe(2);
    expect(model.inFlight('dc1', 'deploys')).toBe(3);
    expect(ids(model.waiting())).toEqual(['a3', 'a4']);
    expect(model.admit(caps)).toEqual([]);

    // The site has room: the tenant's cap holds a3, and says so.
    const hold = model.holdOf(wf('a3'), caps);
    expect(hold).toEqual({ cap: 'tenant', tenantId: 'acme', slot: 'deploys', inFlight: 2, limit: 2 });
    expect(describeCapHold(hold!)).toBe('tenant cap (2 of 2 deploys in flight for tenant acme)');

    // globex ending frees a site slot only: acme is still at its cap.
    model.apply(started('g1', 'deploy', 'dc1'));
    model.apply(completed('g1'));
    expect(model.admit(caps)).toEqual([]);
    // One of acme's ending admits acme's oldest waiting deploy.
    model.apply(started('a2', 'deploy', 'dc1'));
    model.apply(completed('a2'));
    expect(model.tenantInFlight('acme', 'deploys')).toBe(1);
    expect(ids(model.admit(caps))).toEqual(['a3']);
    expect(ids(model.waiting())).toEqual(['a4']);
  });

  it('counts a tenant across its sites, and the operator’s own operations only against the site caps', () => {
    const model = new FleetModel();
    model.apply(requested('a1', 'deploy', 'dc1', 'acme'));
    model.apply(requested('a2', 'deploy', 'dc2', 'acme'));
    model.apply(requested('a3', 'deploy', 'dc3', 'acme'));
    for (const n of ['o1', 'o2', 'o3']) model.apply(requested(n, 'deploy', 'dc1'));
    model.apply(requested('i1', 'inspect', 'dc1', 'acme'));
    expect(ids(model.admit(caps))).toEqual(['a1', 'a2', 'o1', 'o2', 'o3', 'i1']);
    expect(model.holdOf(wf('a3'), caps)).toMatchObject({ cap: 'tenant', tenantId: 'acme' });
    expect(model.tenantInFlight('acme', 'wipes')).toBe(0);
  });

  it('names the site cap when the site is full, whatever the tenant has left', () => {
    const model = new FleetModel();
    model.apply(requested('a1', 'release', 'dc1', 'acme'));
    model.apply(requested('g1', 'release', 'dc1', 'globex'));
    expect(ids(model.admit({ deploys: 1, wipes: 1 }))).toEqual(['a1']);
    const hold = model.holdOf(wf('g1'), { deploys: 1, wipes: 1 });
    expect(describeCapHold(hold!)).toBe('site cap (1 of 1 wipes in flight at site dc1)');
  });

  it('applies a tenant’s own caps from TenantCapsSet, and its default again once they are cleared', () => {
    const model = new FleetModel();
    for (const n of ['a1', 'a2', 'a3', 'a4']) model.apply(requested(n, 'deploy', 'dc1', 'acme'));
    model.apply(tenantCaps('acme', 1, null));
    expect(ids(model.admit(caps))).toEqual(['a1']);
    expect(model.tenantCap(caps, 'acme', 'deploys')).toBe(1);
    model.apply(tenantCaps('acme', 3, null));
    expect(ids(model.admit(caps))).toEqual(['a2', 'a3']);
    model.apply(tenantCaps('acme', null, null));
    expect(model.tenantCap(caps, 'acme', 'deploys')).toBe(2);
    expect(model.tenantCap(caps, 'acme', 'wipes')).toBe(Number.POSITIVE_INFINITY);
    // A lower cap stops nothing running: a4 waits until acme is under its default again.
    expect(model.admit(caps)).toEqual([]);
    for (const n of ['a1', 'a2']) {
      model.apply(started(n, 'deploy', 'dc1'));
      model.apply(completed(n));
    }
    expect(ids(model.admit(caps))).toEqual(['a4']);
  });

  it('keeps a started workflow’s tenant through a restart: the log alone gives the same counters', () => {
    const events = [
      requested('a1', 'deploy', 'dc1', 'acme'),
      requested('a2', 'deploy', 'dc1', 'acme'),
      requested('a3', 'deploy', 'dc1', 'acme'),
      started('a1', 'deploy', 'dc1'),
      started('a2', 'deploy', 'dc1'),
    ];
    const model = new FleetModel();
    for (const e of events) model.apply(e);
    expect(model.tenantInFlight('acme', 'deploys')).toBe(2);
    expect(model.admit(caps)).toEqual([]);
    model.apply(completed('a1'));
    expect(ids(model.admit(caps))).toEqual(['a3']);
  });

  const nodes = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const sites = ['dc1', 'dc2'];
  const tenants = ['acme', 'globex', undefined];
  const step = fc.oneof(
    fc.record({
      kind: fc.constant('request' as const),
      node: fc.constantFrom(...nodes),
      operation: fc.constantFrom<Op>('deploy', 'release', 'inspect'),
      site: fc.constantFrom(...sites),
      tenant: fc.constantFrom(...tenants),
    }),
    fc.record({ kind: fc.constantFrom('admit' as const, 'complete' as const, 'cancel' as const), node: fc.constantFrom(...nodes) }),
  );
  const slots = fc.integer({ min: 1, max: 3 });
  const capsArb = fc.record({ deploys: slots, wipes: slots, tenant: fc.record({ deploys: slots, wipes: slots }, { requiredKeys: [] }) });
  const overrides = fc.array(fc.record({ tenant: fc.constantFrom('acme', 'globex'), deploys: fc.option(slots), wipes: fc.option(slots) }), { maxLength: 2 });

  test.prop([fc.array(step, { maxLength: 60 }), capsArb, overrides])(
    'never admits past a site or tenant cap, admits what a walk of the queue admits, and starves nothing once slots free',
    (steps, caps, owned) => {
      const model = new FleetModel();
      for (const o of owned) model.apply(tenantCaps(o.tenant, o.deploys, o.wipes));
      const capOf = (tenant: string, slot: 'deploys' | 'wipes') => model.tenantCap(caps, tenant, slot);
      // The test's own books: what was requested (and not yet ended), and what runs.
      const requests = new Map<string, { operation: Op; site: string; tenant: string | undefined }>();
      const running = new Map<string, { operation: Op; site: string; tenant: string | undefined }>();
      const everRequested = new Set<string>();
      const admittedOnce = new Set<string>();
      const cancelled = new Set<string>();
      const checkCaps = () => {
        const site = new Map<string, number>();
        const tenant = new Map<string, number>();
        for (const r of running.values()) {
          const slot = cappedOperations[r.operation];
          if (!slot) continue;
          site.set(`${r.site}/${slot}`, (site.get(`${r.site}/${slot}`) ?? 0) + 1);
          if (r.tenant) tenant.set(`${r.tenant}/${slot}`, (tenant.get(`${r.tenant}/${slot}`) ?? 0) + 1);
        }
        for (const [key, n] of site) expect(n).toBeLessThanOrEqual(caps[key.split('/')[1] as 'deploys' | 'wipes']);
        for (const [key, n] of tenant) expect(n).toBeLessThanOrEqual(capOf(key.split('/')[0]!, key.split('/')[1] as 'deploys' | 'wipes'));
        for (const [key, n] of site) expect(model.inFlight(key.split('/')[0]!, key.split('/')[1] as 'deploys' | 'wipes')).toBe(n);
      };
      // Admission as a plain walk of the whole queue, oldest first: what the grouped merge must answer.
      const walked = (): string[] => {
        const site = new Map<string, number>();
        const tenant = new Map<string, number>();
        return model
          .waiting()
          .filter((op) => {
            const slot = cappedOperations[op.operation];
            if (!slot) return true;
            const s = `${op.siteId}/${slot}`;
            if (model.inFlight(op.siteId, slot) + (site.get(s) ?? 0) >= caps[slot]) return false;
            const t = op.tenantId && `${op.tenantId}/${slot}`;
            if (op.tenantId && model.tenantInFlight(op.tenantId, slot) + (tenant.get(t!) ?? 0) >= capOf(op.tenantId, slot)) return false;
            site.set(s, (site.get(s) ?? 0) + 1);
            if (t) tenant.set(t, (tenant.get(t) ?? 0) + 1);
            return true;
          })
          .map((op) => op.nodeId);
      };
      const admitAll = () => {
        for (const op of model.admit(caps)) {
          const r = requests.get(op.nodeId)!;
          expect(admittedOnce.has(op.nodeId)).toBe(false);
          admittedOnce.add(op.nodeId);
          running.set(op.nodeId, r);
          model.apply(started(op.nodeId, r.operation, r.site));
        }
      };
      const end = (node: string) => {
        model.apply(completed(node));
        model.forget(wf(node));
        running.delete(node);
        requests.delete(node);
      };

      for (const s of steps) {
        if (s.kind === 'request') {
          // One operation per node at a time, each node requested once (as the node aggregate allows).
          if (everRequested.has(s.node)) continue;
          everRequested.add(s.node);
          requests.set(s.node, { operation: s.operation, site: s.site, tenant: s.tenant });
          model.apply(requested(s.node, s.operation, s.site, s.tenant));
        } else if (s.kind === 'admit') {
          expect(ids(model.admissible(caps))).toEqual(walked());
          admitAll();
        } else if (s.kind === 'complete') {
          if (running.has(s.node)) end(s.node);
        } else if (requests.has(s.node) && !running.has(s.node)) {
          model.apply({ type: 'NodeCancelRequested', data: { nodeId: s.node, operation: 'deploy', workflowId: wf(s.node), reason: 'x' } });
          requests.delete(s.node);
          cancelled.add(s.node);
        }
        expect(ids(model.admissible(caps))).toEqual(walked());
        checkCaps();
      }

      // Every operation still waiting starts once running ones end: round by round, nothing waits forever.
      for (let round = 0; model.waiting().length > 0; round++) {
        expect(round).toBeLessThanOrEqual(nodes.length);
        admitAll();
        checkCaps();
        for (const node of [...running.keys()]) end(node);
      }
      for (const node of everRequested) expect(admittedOnce.has(node) || cancelled.has(node)).toBe(true);
    },
  );
});
