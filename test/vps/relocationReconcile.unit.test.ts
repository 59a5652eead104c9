import { describe, expect, it } from 'vitest';
import type { VpsEvent } from '../../schemas/vps/events.ts';
import { relocateEffects } from '../../services/processes/vpsReconciler/metalAccess.ts';
import { planMetalPass } from '../../services/processes/vpsReconciler/metalConverge.ts';
import { isAtRest, VpsModel } from '../../services/processes/vpsReconciler/model.ts';
import { decideVps, evolveVps } from '../../services/processes/vpsReconciler/reconciliation.ts';

const RESEND = 1_000;
const KEY = 'tenant-a/vm-1';
const ev = (type: string, data: Record<string, unknown>) => ({ type, data }) as VpsEvent;
const ids = { tenantId: 'tenant-a', instanceId: 'vm-1' };
const size = { vcpus: 4, memoryMib: 4_096, diskGib: 40 };
const history = [
  ev('PoolCreated', {
    poolId: 'metal-a',
    class: 'metal',
    agent: 'bcd',
    accountId: null,
    siteId: 'dc1',
    runtime: 'process-runtime',
    policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  }),
  ev('InstanceRequested', {
    ...ids,
    poolId: 'metal-a',
    flavorId: 'medium',
    image: 'img',
    sshKeys: [],
    userData: null,
    resources: { instances: 1, ...size },
    requestedAt: 't',
  }),
  ev('InstancePlaced', {
    ...ids,
    siteId: 'dc1',
    poolId: 'metal-a',
    runtime: 'process-runtime',
    nodeId: 'n1',
    resources: size,
    freeBefore: size,
    fromHolds: [],
    considered: 2,
    placedAt: 't',
  }),
  ev('InstanceObserved', { ...ids, observed: 'running', providerInstanceId: null, addresses: ['10.0.0.7'], message: null }),
];
const requested = ev('InstanceRelocationRequested', { ...ids, siteId: 'dc1', fromNodeId: 'n1', reason: 'silent', requestedAt: 't' });
const relocated = ev('InstanceRelocated', {
  ...ids,
  siteId: 'dc1',
  poolId: 'metal-a',
  runtime: 'process-runtime',
  fromNodeId: 'n1',
  nodeId: 'n2',
  reason: 'silent',
  resources: size,
  freeBefore: size,
  fromHolds: [],
  considered: 2,
  relocatedAt: 't',
});
const modelAfter = (events: readonly VpsEvent[]) => {
  const model = new VpsModel();
  events.forEach((e, i) => evolveVps(model, { type: 'event', event: e, seq: i + 1 }, { backoffMs: 1, maxBackoffMs: 1 }));
  return model;
};
const steps = (effects: ReturnType<typeof planMetalPass>) =>
  effects.map((e) =>
    e.kind === 'task' ? `task ${e.task.step}` : e.kind === 'command' ? `${e.name} ${(e.payload as { observed?: string }).observed ?? ''}`.trim() : e.kind,
  );
const heard = (model: VpsModel, nodeId: string, at: number, listed: boolean) => {
  const observation = {
    nodeId,
    at,
    instances: listed ? [{ id: 'vm-1', runtime: 'process-runtime', desiredState: 'running' as const, state: 'running' as const, addresses: [] }] : [],
  };
  evolveVps(model, { type: 'observed', observation }, { backoffMs: 1, maxBackoffMs: 1 });
  return decideVps({ type: 'observed', observation }, model, { resyncMs: 100, hostResendMs: RESEND }).map((r) => ({
    key: r.key,
    tasks: r.effects.map((e) => (e.kind === 'task' ? e.task : undefined)),
  }));
};

describe('the reconciler moves an instance off a lost node', () => {
  it('relocates first when asked (and keeps asking while nothing fits), then applies on the new node, recorded provisioning until it runs there', () => {
    const asked = modelAfter([...history, requested]);
    const instance = asked.instances.get(KEY)!;
    expect(isAtRest(instance)).toBe(false);
    expect(steps(planMetalPass(instance, asked.hosts, 0, RESEND))).toEqual(['task relocate']);
    // The tick passes over it again (a relocation refused for capacity is asked again).
    expect(decideVps({ type: 'tick', now: 10_000 }, asked, { resyncMs: 100, hostResendMs: RESEND }).map((r) => r.key)).toEqual([KEY]);

    const moved = modelAfter([...history, requested, relocated]);
    const there = moved.instances.get(KEY)!;
    expect(there.placement).toEqual({ siteId: 'dc1', nodeId: 'n2' });
    expect([...(moved.placedOn.get('n1') ?? [])]).toEqual([]);
    expect([...moved.placedOn.get('n2')!]).toEqual([KEY]);
    expect(steps(planMetalPass(there, moved.hosts, 0, RESEND))).toEqual(['vps.recordInstanceObserved provisioning', 'task apply']);
    // n2 lists it running: recorded running again; nothing more to apply.
    heard(moved, 'n2', 50, true);
    expect(steps(planMetalPass(there, moved.hosts, 100, RESEND))).toEqual(['vps.recordInstanceObserved running']);
  });

  it('records an instance whose relocation finds no node provisioning, with no address and the refusal, until it runs on its new node', () => {
    const asked = modelAfter([...history, requested]);
    const instance = asked.instances.get(KEY)!;
    const access = { nodes: undefined, presence: { presenceOf: () => undefined }, sendAgentCommand: () => Promise.resolve() };
    const [relocate] = relocateEffects(instance, asked, access);
    if (relocate?.kind !== 'command') throw new Error('expected vps.relocateInstance');
    expect(relocate).toMatchObject({ name: 'vps.relocateInstance', payload: { siteId: 'dc1', ...ids, candidates: [] } });
    // No node fits: the request stands (nothing else is asked), and the instance no longer claims its lost node's report.
    const waiting = relocate.ifRefused?.({ code: 'NO_CAPACITY', message: 'no node fits: n2: not enough vcpus' });
    expect(waiting).toEqual([
      expect.objectContaining({
        name: 'vps.recordInstanceObserved',
        payload: { ...ids, observed: 'provisioning', addresses: [], message: 'NO_CAPACITY: no node takes it off n1 yet: no node fits: n2: not enough vcpus' },
      }),
    ]);
    // Any other refusal is not this step's to absorb.
    expect(relocate.ifRefused?.({ code: 'NOT_FOUND', message: 'gone' })).toBeUndefined();

    // Moved at last: recorded provisioning again without the refusal, then running once its new node lists it.
    const waited = ev('InstanceObserved', { ...ids, observed: 'provisioning', providerInstanceId: null, addresses: [], message: 'NO_CAPACITY: …' });
    const moved = modelAfter([...history, requested, waited, relocated]);
    const there = moved.instances.get(KEY)!;
    const recorded = planMetalPass(there, moved.hosts, 0, RESEND);
    expect(steps(recorded)).toEqual(['vps.recordInstanceObserved provisioning', 'task apply']);
    expect(recorded[0]).toMatchObject({ payload: { observed: 'provisioning', addresses: [] } });
    expect(recorded[0]).not.toHaveProperty('payload.message');
    heard(moved, 'n2', 50, true);
    expect(steps(planMetalPass(there, moved.hosts, 100, RESEND))).toEqual(['vps.recordInstanceObserved running']);
  });

  it('asks the node it left to remove its copy when that node lists it again, once per resend period, and forgets it once gone', () => {
    const moved = modelAfter([...history, requested, relocated]);
    expect(heard(moved, 'n1', 1_000, true)).toEqual([{ key: `copy:n1/${KEY}`, tasks: [{ converge: KEY, step: 'removeCopy', nodeId: 'n1' }] }]);
    evolveVps(moved, { type: 'performed', task: { converge: KEY, step: 'removeCopy', nodeId: 'n1' }, now: 1_000, error: undefined } as never, {
      backoffMs: 1,
      maxBackoffMs: 1,
    });
    expect(heard(moved, 'n1', 1_500, true)).toEqual([]);
    expect(heard(moved, 'n1', 2_000, true)).toHaveLength(1);
    // Its heartbeat no longer lists it: no copy left there, nothing more to ask.
    expect(heard(moved, 'n1', 2_500, false)).toEqual([]);
    expect(moved.copiesLeft.get('n1')?.size).toBe(0);
    expect(heard(moved, 'n1', 5_000, true)).toEqual([]);
  });

  it('hands a metal instance back to its host after a remediation (applied again there), or relocates it first when its node was lost meanwhile', () => {
    const remediating = ev('InstanceRemediationRequested', { ...ids, poolId: 'metal-a', workflowId: 'wf-1', profile: 'p', returnTo: 'running', inputs: {} });
    const completed = ev('InstanceRemediationCompleted', { ...ids, workflowId: 'wf-1', returnTo: 'running' });
    const held = modelAfter([...history, remediating]);
    heard(held, 'n1', 10, true);
    // Left alone while the remediation runs, whatever its host says.
    expect(planMetalPass(held.instances.get(KEY)!, held.hosts, 20, RESEND)).toEqual([]);
    const back = modelAfter([...history, remediating, completed]);
    heard(back, 'n1', 10, true);
    const instance = back.instances.get(KEY)!;
    // Its host reports it running as wanted, and it is applied again all the same, once.
    expect(steps(planMetalPass(instance, back.hosts, 20, RESEND))).toEqual(['task apply']);
    evolveVps(back, { type: 'performed', task: { converge: KEY, step: 'apply' }, now: 30, error: undefined } as never, { backoffMs: 1, maxBackoffMs: 1 });
    // Not applied again; what its host says is taken (here: no address any more).
    expect(steps(planMetalPass(instance, back.hosts, 40, RESEND))).toEqual(['vps.recordInstanceObserved running']);
    // Its node was found lost during the remediation: once it ends, it is relocated first.
    const lost = modelAfter([...history, remediating, requested, completed]);
    expect(steps(planMetalPass(lost.instances.get(KEY)!, lost.hosts, 20, RESEND))).toEqual(['task relocate']);
  });
});
