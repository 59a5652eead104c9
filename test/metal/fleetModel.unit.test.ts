import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../schemas/events.ts';
import { cappedOperations } from '../../schemas/metal/workflow.ts';
import { FleetModel, type Caps, type PendingOperation } from '../../services/processes/orchestrator/fleetModel.ts';

const requested = (nodeId: string, operation: 'deploy' | 'release' | 'inspect', siteId = 'dc1'): PlatformEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId, siteId, operation, workflowId: `wf-${nodeId.padStart(12, '0')}`, inputs: {} },
});
const startedFor = (e: PlatformEvent): PlatformEvent => {
  const d = (e as Extract<PlatformEvent, { type: 'NodeOperationRequested' }>).data;
  return {
    type: 'WorkflowStarted',
    data: {
      workflowId: d.workflowId,
      nodeId: d.nodeId,
      siteId: d.siteId,
      operation: d.operation,
      profile: { id: d.operation, version: 1 },
      startedAt: 't',
      steps: [{ id: 'x', runsOn: 'site', params: {}, timeoutMs: 1, retry: { maxAttempts: 1, backoffMs: 0 }, destructive: false }],
    },
  };
};

describe('fleet model', () => {
  it('admits capped operations per site up to the cap, oldest first, and more as workflows end', () => {
    const model = new FleetModel();
    const events = [requested('a', 'deploy'), requested('b', 'deploy'), requested('c', 'deploy'), requested('d', 'deploy', 'dc2'), requested('e', 'inspect')];
    for (const e of events) model.apply(e);
    expect(model.admit({ deploys: 2, wipes: 1 }).map((o) => o.nodeId)).toEqual(['a', 'b', 'd', 'e']);
    expect(model.admit({ deploys: 2, wipes: 1 })).toEqual([]);
    expect(model.waiting().map((o) => o.nodeId)).toEqual(['c']);
    model.apply(startedFor(events[0]!));
    model.apply({ type: 'WorkflowCompleted', data: { workflowId: 'wf-00000000000a' } });
    expect(model.inFlight('dc1', 'deploys')).toBe(1);
    expect(model.admit({ deploys: 2, wipes: 1 }).map((o) => o.nodeId)).toEqual(['c']);
  });

  it('counts wipes apart from deploys and ignores a repeated request', () => {
    const model = new FleetModel();
    model.apply(requested('a', 'release'));
    model.apply(requested('a', 'release'));
    model.apply(requested('b', 'release'));
    expect(model.admit({ deploys: 1, wipes: 1 }).map((o) => o.nodeId)).toEqual(['a']);
    expect(model.inFlight('dc1', 'wipes')).toBe(1);
    expect(model.inFlight('dc1', 'deploys')).toBe(0);
    expect(model.waiting().map((o) => o.nodeId)).toEqual(['b']);
  });

  it('never admits an operation cancelled while it waited, and frees the slot of a cancelled workflow', () => {
    const model = new FleetModel();
    const [a, b, c] = [requested('a', 'deploy'), requested('b', 'deploy'), requested('c', 'deploy')];
    for (const e of [a, b, c]) model.apply(e);
    expect(model.admit({ deploys: 1, wipes: 1 }).map((o) => o.nodeId)).toEqual(['a']);
    model.apply({ type: 'NodeCancelRequested', data: { nodeId: 'b', operation: 'deploy', workflowId: 'wf-00000000000b', reason: 'x' } });
    expect(model.waiting().map((o) => o.nodeId)).toEqual(['c']);
    model.apply(startedFor(a));
    model.apply({ type: 'WorkflowCancelled', data: { workflowId: 'wf-00000000000a', nodeId: 'a', reason: 'x', stepIndex: 0, started: true } });
    expect(model.inFlight('dc1', 'deploys')).toBe(0);
    expect(model.admit({ deploys: 1, wipes: 1 }).map((o) => o.nodeId)).toEqual(['c']);
  });

  it('starts no more workflows across the fleet than its cap, inspections and deploys of every site alike, oldest first', () => {
    const model = new FleetModel();
    const caps: Caps = { deploys: 10, wipes: 10, workflows: 3 };
    const events = [
      requested('a', 'inspect'),
      requested('b', 'deploy', 'dc2'),
      requested('c', 'inspect', 'dc2'),
      requested('d', 'deploy'),
      requested('e', 'inspect'),
    ];
    for (const e of events) model.apply(e);
    expect(model.admit(caps).map((o) => o.nodeId)).toEqual(['a', 'b', 'c']);
    expect(model.workflowsInFlight).toBe(3);
    expect(model.admit(caps)).toEqual([]);
    model.apply(startedFor(events[1]!));
    model.apply({ type: 'WorkflowCompleted', data: { workflowId: 'wf-00000000000b' } });
    expect(model.admit(caps).map((o) => o.nodeId)).toEqual(['d']);
    model.apply({ type: 'WorkflowFailed', data: { workflowId: 'wf-00000000000a', failedStep: 'x', stepIndex: 0, code: 'X', reason: 'x' } });
    // An operation whose start was refused ends without a WorkflowFailed: its place is freed all the same.
    model.apply({
      type: 'NodeOperationFailed',
      data: { nodeId: 'c', operation: 'inspect', workflowId: 'wf-00000000000c', reason: 'x', failedStep: null, maintenance: false },
    });
    expect(model.admit(caps).map((o) => o.nodeId)).toEqual(['e']);
    expect(model.workflowsInFlight).toBe(2);
  });

  it('holds a site with free slots behind the fleet cap, and a full site does not spend the fleet cap', () => {
    const model = new FleetModel();
    for (const e of [requested('a', 'deploy'), requested('b', 'deploy'), requested('c', 'deploy', 'dc2'), requested('d', 'inspect')]) model.apply(e);
    expect(model.admit({ deploys: 1, wipes: 1, workflows: 2 }).map((o) => o.nodeId)).toEqual(['a', 'c']);
    expect(model.admit({ deploys: 1, wipes: 1, workflows: 3 }).map((o) => o.nodeId)).toEqual(['d']);
    expect(model.waiting().map((o) => o.nodeId)).toEqual(['b']);
  });

  /** Admission as a plain walk of the whole queue: what `admissible` must keep answering without the walk. */
  const walked = (model: FleetModel, caps: Caps): PendingOperation[] => {
    const taken = new Map<string, number>();
    let fleetFree = (caps.workflows ?? Infinity) - model.workflowsInFlight;
    return model.waiting().filter((op) => {
      if (fleetFree <= 0) return false;
      const slot = cappedOperations[op.operation];
      if (slot) {
        const key = `${op.siteId}/${slot}`;
        if (model.inFlight(op.siteId, slot) + (taken.get(key) ?? 0) >= caps[slot]) return false;
        taken.set(key, (taken.get(key) ?? 0) + 1);
      }
      fleetFree--;
      return true;
    });
  };
  const nodeIds = ['a', 'b', 'c', 'd', 'e', 'f'];
  const step = fc.oneof(
    fc.record({
      kind: fc.constant('request' as const),
      node: fc.constantFrom(...nodeIds),
      operation: fc.constantFrom<'deploy' | 'release' | 'inspect'>('deploy', 'release', 'inspect'),
      site: fc.constantFrom('dc1', 'dc2'),
    }),
    fc.record({ kind: fc.constantFrom('admit' as const, 'complete' as const, 'cancel' as const), node: fc.constantFrom(...nodeIds) }),
  );

  test.prop([
    fc.array(step, { maxLength: 40 }),
    fc.record(
      { deploys: fc.integer({ min: 0, max: 3 }), wipes: fc.integer({ min: 0, max: 3 }), workflows: fc.integer({ min: 0, max: 4 }) },
      { requiredKeys: ['deploys', 'wipes'] },
    ),
  ])('admits exactly what a walk of the whole queue admits, whatever was requested, started, ended or cancelled', (steps, caps) => {
    const model = new FleetModel();
    const requests = new Map<string, PlatformEvent>();
    for (const s of steps) {
      const workflowId = `wf-${s.node.padStart(12, '0')}`;
      if (s.kind === 'request') {
        const e = requested(s.node, s.operation, s.site);
        if (!requests.has(s.node)) requests.set(s.node, e);
        model.apply(e);
      } else if (s.kind === 'admit') {
        for (const op of model.admissible(caps)) if (op.nodeId === s.node) model.admitted(op);
        if (requests.has(s.node) && !model.waiting().some((o) => o.workflowId === workflowId)) model.apply(startedFor(requests.get(s.node)!));
      } else if (s.kind === 'complete') {
        model.apply({ type: 'WorkflowCompleted', data: { workflowId } });
        model.forget(workflowId);
        requests.delete(s.node);
      } else {
        model.apply({ type: 'NodeCancelRequested', data: { nodeId: s.node, operation: 'deploy', workflowId, reason: 'x' } });
      }
      expect(model.admissible(caps)).toEqual(walked(model, caps));
    }
  });
});
