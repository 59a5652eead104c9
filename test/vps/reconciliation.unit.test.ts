import { describe, expect, it } from 'vitest';
import { ProviderError } from 'better-compute/sdk';
import { idFor } from '../../schemas/ids.ts';
import type { VpsEvent } from '../../schemas/vps/events.ts';
import type { EngineCommand } from '../../services/platform/processManager/processManager.ts';
import { planPass } from '../../services/processes/vpsReconciler/converge.ts';
import type { ConvergeTask } from '../../services/processes/vpsReconciler/effects.ts';
import { VpsModel } from '../../services/processes/vpsReconciler/model.ts';
import { decideVps, evolveVps } from '../../services/processes/vpsReconciler/reconciliation.ts';
import { plainReactions, processManagerSpec } from '../support/processManagerSpec.ts';

const backoff = { backoffMs: 1_000, maxBackoffMs: 4_000 };
const RESYNC_MS = 500;
const given = processManagerSpec<VpsEvent, VpsModel, ConvergeTask>({
  model: () => new VpsModel(),
  evolve: (model, input) => evolveVps(model, input, backoff),
  decide: (input, model) => decideVps(input, model, { resyncMs: RESYNC_MS, hostResendMs: 30_000 }),
});
const ev = (type: string, data: Record<string, unknown>) => ({ type, data }) as VpsEvent;
const event = (type: string, data: Record<string, unknown>) => ({ type: 'event', event: ev(type, data) }) as const;
const KEY = 'tenant-a/web-1';
const world = [
  ev('ProviderAccountCreated', { accountId: 'acme', providerId: 'acme-cloud', region: 'eu', config: {}, tokenSecretId: 'acme-token' }),
  ev('PoolCreated', {
    poolId: 'acme-pool',
    class: 'provider',
    agent: 'none',
    accountId: 'acme',
    siteId: null,
    policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  }),
];
const requested = ev('InstanceRequested', {
  tenantId: 'tenant-a',
  instanceId: 'web-1',
  poolId: 'acme-pool',
  flavorId: 'small',
  image: 'debian-12',
  sshKeys: [],
  userData: null,
  resources: { instances: 1, vcpus: 1, memoryMib: 1_024, diskGib: 25 },
  requestedAt: 't',
});
/** A pass for an event (`intent`), the resync's poll at `polledAt`, or a retry after a backoff (both coalesced behind a queued pass). */
const pass = (why: 'intent' | 'retry' | { polledAt: number } = 'intent') => ({
  key: KEY,
  effects: [{ kind: 'task', task: { converge: KEY, step: 'plan', ...(typeof why === 'object' ? why : {}) } }],
  ...(why === 'intent' ? {} : { coalesce: true }),
});
const observed = (state: string, extra: Record<string, unknown> = {}) =>
  ev('InstanceObserved', { tenantId: 'tenant-a', instanceId: 'web-1', observed: state, providerInstanceId: null, addresses: [], message: null, ...extra });

describe('reconciliation (decide/evolve of vps-reconciler)', () => {
  it('passes over an instance its tenant asked for, or asked something new of', () => {
    given(world).when({ type: 'event', event: requested }).then([pass()]);
    given([...world, requested])
      .when(event('InstanceDesiredStateSet', { tenantId: 'tenant-a', instanceId: 'web-1', desired: 'stopped' }))
      .then([pass()]);
  });

  it('does not react to its own reports, nor to instances of pools it does not serve', () => {
    given([...world, requested])
      .when({ type: 'event', event: observed('provisioning') })
      .then([]);
    given([...world, requested, observed('provisioning')])
      .when({ type: 'event', event: observed('running') })
      .then([]);
    given([]).when({ type: 'event', event: requested }).then([]);
  });

  it('resyncs instances not at rest, coalesced behind a queued pass, and leaves those at rest alone', () => {
    given([...world, requested, observed('provisioning')])
      .when({ type: 'tick', now: 0 })
      .then([pass({ polledAt: 0 })]);
    given([...world, requested, observed('running')])
      .when({ type: 'tick', now: 0 })
      .then([]);
    given([...world, requested, observed('error', { message: 'quota at the provider' })])
      .when({ type: 'resumed', now: 0 })
      .then([]);
  });

  it('polls an instance at most once per resync period, counted from its last probe', () => {
    const spec = given([...world, requested, observed('provisioning')]);
    evolveVps(spec.model, { type: 'performed', task: { converge: KEY, step: 'probe' }, now: 1_000 }, backoff);
    spec.when({ type: 'tick', now: 1_000 + RESYNC_MS - 1 }).then([]);
    spec.when({ type: 'tick', now: 1_000 + RESYNC_MS }).then([pass({ polledAt: 1_000 + RESYNC_MS })]);
  });

  it('a poll asks the provider nothing once the instance is at rest or was probed after the poll was asked for; any other pass does', () => {
    const probeTask = [{ kind: 'task', task: { converge: KEY, step: 'probe' } }];
    const atRest = given([...world, requested, observed('running')]).model.instances.get(KEY)!;
    expect(planPass(atRest, { polledAt: 0 })).toEqual([]);
    expect(planPass(atRest)).toEqual(probeTask);
    const spec = given([...world, requested, observed('provisioning')]);
    const booting = spec.model.instances.get(KEY)!;
    evolveVps(spec.model, { type: 'performed', task: { converge: KEY, step: 'probe' }, now: 2_000 }, backoff);
    expect(planPass(booting, { polledAt: 2_000 })).toEqual([]);
    expect(planPass(booting, { polledAt: 2_001 })).toEqual(probeTask);
  });

  it('backs off an instance whose provider stayed unavailable, doubling per failure, and clears it after a pass', () => {
    const spec = given([...world, requested, observed('provisioning')]);
    const failed = (now: number) =>
      evolveVps(spec.model, { type: 'performed', task: { converge: KEY, step: 'probe' }, error: new ProviderError('transient', 'HTTP 503'), now }, backoff);
    failed(0);
    spec.when({ type: 'tick', now: 999 }).then([]);
    spec.when({ type: 'tick', now: 1_000 }).then([pass('retry')]);
    failed(1_000);
    expect(spec.model.retries.get(KEY)).toEqual({ failures: 2, at: 3_000 });
    evolveVps(spec.model, { type: 'performed', task: { converge: KEY, step: 'probe' }, now: 3_000 }, backoff);
    expect(spec.model.retries.has(KEY)).toBe(false);
  });

  it('plans provisioning before any provider call, and only the quota back when another tenant owns the id', () => {
    const spec = given([...world, requested]);
    const instance = spec.model.instances.get(KEY)!;
    const plan = planPass(instance);
    expect(plainReactions([{ key: KEY, effects: plan }])[0]!.effects).toEqual([
      {
        command: 'vps.recordInstanceObserved',
        payload: { tenantId: 'tenant-a', instanceId: 'web-1', observed: 'provisioning' },
        commandId: idFor('observe-provisioning', KEY),
        refusable: true,
      },
      { kind: 'task', task: { converge: KEY, step: 'probe' } },
    ]);
    const provisioning = plan[0] as EngineCommand<ConvergeTask>;
    expect(provisioning.ifRefused!({ code: 'ALREADY_EXISTS', message: 'tenant-b' })).toEqual([
      { kind: 'command', name: 'vps.releaseQuota', payload: { tenantId: 'tenant-a', instanceId: 'web-1' }, commandId: idFor('quota-release', KEY) },
    ]);
    expect(provisioning.ifRefused!({ code: 'ILLEGAL_TRANSITION', message: 'x' })).toBeUndefined();
    evolveVps(spec.model, { type: 'sent', command: provisioning, refusal: { code: 'ALREADY_EXISTS', message: 'tenant-b' } }, backoff);
    expect(instance.refused).toBe(true);
    expect(planPass(instance)).toEqual([]);
  });

  it('applies its own successful reports and quota releases at once, and leaves a refused report to the log', () => {
    const spec = given([...world, requested]);
    const instance = spec.model.instances.get(KEY)!;
    const report: EngineCommand<ConvergeTask> = {
      kind: 'command',
      name: 'vps.recordInstanceObserved',
      payload: { tenantId: 'tenant-a', instanceId: 'web-1', observed: 'running', providerInstanceId: 'srv-1', addresses: ['203.0.113.1'] },
      commandId: 'observe-1',
    };
    evolveVps(spec.model, { type: 'sent', command: report, refusal: { code: 'ILLEGAL_TRANSITION', message: 'x' } }, backoff);
    expect(instance.observed).toBeNull();
    evolveVps(spec.model, { type: 'sent', command: report }, backoff);
    expect(instance).toMatchObject({ observed: 'running', providerInstanceId: 'srv-1', addresses: ['203.0.113.1'], message: null });
    const release = { kind: 'command', name: 'vps.releaseQuota', payload: { tenantId: 'tenant-a', instanceId: 'web-1' }, commandId: 'q' } as const;
    evolveVps(spec.model, { type: 'sent', command: release }, backoff);
    expect(instance.released).toBe(true);
  });

  it('is not taken back by the log’s copy of a report older than one it applied when answered; a later report applies', () => {
    const spec = given([...world, requested]);
    const instance = spec.model.instances.get(KEY)!;
    const report = (observed: string, extra: Record<string, unknown> = {}): EngineCommand<ConvergeTask> => ({
      kind: 'command',
      name: 'vps.recordInstanceObserved',
      payload: { tenantId: 'tenant-a', instanceId: 'web-1', observed, ...extra },
      commandId: `observe-${observed}`,
    });
    evolveVps(spec.model, { type: 'sent', command: report('provisioning'), appended: true, seq: 10 }, backoff);
    evolveVps(spec.model, { type: 'sent', command: report('running', { providerInstanceId: 'srv-1' }), appended: true, seq: 11 }, backoff);
    // The consumer, behind, now delivers the log's copies of both reports.
    evolveVps(spec.model, { type: 'event', event: observed('provisioning'), seq: 10 }, backoff);
    expect(instance).toMatchObject({ observed: 'running', providerInstanceId: 'srv-1' });
    spec.when({ type: 'tick', now: 0 }).then([]);
    evolveVps(spec.model, { type: 'event', event: observed('running', { providerInstanceId: 'srv-1' }), seq: 11 }, backoff);
    // A report written after it (another reconciler, or this one before a restart) is news.
    evolveVps(spec.model, { type: 'event', event: observed('stopped', { providerInstanceId: 'srv-1' }), seq: 12 }, backoff);
    expect(instance).toMatchObject({ observed: 'stopped', observedSeq: 12 });
  });
});
