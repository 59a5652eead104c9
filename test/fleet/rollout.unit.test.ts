import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { recordHostOutcome, recordHostRestored, startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { abortRollout, continueRollout, pauseRollout, resumeRollout, rollbackRollout } from '../../services/fleet/rollout/operatorCommands.ts';
import { rolloutAggregate } from '../../services/fleet/rollout/rollout.ts';
import { planRollout } from '../../services/fleet/rollout/rolloutPlan.ts';
import { startRollout } from '../../services/fleet/rollout/startRollout.ts';
import { deciderSpec } from '../metal/spec.ts';
import { options, pinned, reported, started, startInputs, waveStarted } from './rolloutLog.ts';

const rollout = deciderSpec(rolloutAggregate);
const hosts = ['vm1', 'vm2', 'vm3', 'vm4', 'vm5'];
const start = { module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...options };
const id = { rolloutId: 'nginx-1' };
/** Canary vm1 healthy, wave 1 (vm2, vm3) started. */
const inWave1: RolloutEvent[] = [started(hosts), waveStarted(0, ['vm1']), reported('vm1', 0, 'healthy'), waveStarted(1, ['vm2', 'vm3'])];

describe('fleet.startRollout', () => {
  it('plans the waves and the digest of the plan; no host is touched', () => {
    rollout([])
      .when(startRollout, start, { dependencies: startInputs(hosts) })
      .then([started(hosts)]);
    expect((started(hosts).data as { waves: string[][] }).waves).toEqual([['vm1'], ['vm2', 'vm3'], ['vm4', 'vm5']]);
  });

  it('the digest covers versions, waves and breaker: another option is another digest, the host order is not', () => {
    const digest = (over: Partial<typeof start>) => planRollout({ ...start, ...over }).planDigest;
    expect(digest({ hosts: [...hosts].reverse() })).toBe(digest({}));
    for (const over of [{ toVersion: '1.26.2' }, { canarySize: 2 }, { maxConsecutiveFailures: 3 }, { waveTimeoutMs: 1_000 }, { hosts: ['vm1'] }]) {
      expect(digest(over)).not.toBe(digest({}));
    }
  });

  it('starts only the plan an approver signed (PLAN_DIGEST_MISMATCH otherwise)', () => {
    const { planDigest } = planRollout(start);
    rollout([])
      .when(startRollout, { ...start, planDigest }, { dependencies: startInputs(hosts) })
      .then((events) => expect(events).toHaveLength(1));
    rollout([])
      .when(startRollout, { ...start, planDigest: 'f'.repeat(64) }, { dependencies: startInputs(hosts) })
      .thenRejects('PLAN_DIGEST_MISMATCH');
  });

  it('one rollout of a module at a time: the same plan again appends nothing, another is ROLLOUT_IN_PROGRESS until it ends', () => {
    rollout([started(hosts)])
      .when(startRollout, start, { dependencies: startInputs(hosts) })
      .then([]);
    rollout([started(hosts)])
      .when(startRollout, { ...start, canarySize: 2 }, { dependencies: startInputs(hosts) })
      .thenRejects('ROLLOUT_IN_PROGRESS');
    rollout([...inWave1, { type: 'RolloutHalted', data: { ...id, reason: 'wave_failed', failed: [] } }])
      .when(startRollout, { ...start, hosts: ['vm9'] }, { dependencies: startInputs(['vm9']) })
      .thenRejects('ROLLOUT_IN_PROGRESS');
    rollout([started(hosts), { type: 'RolloutAborted', data: id }])
      .when(startRollout, start, { dependencies: startInputs(hosts) })
      .then((events) => expect(events).toEqual([started(hosts, 2)]));
  });

  it('refuses hosts whose plan does not pin the module at fromVersion, each listed, and a version not published', () => {
    const inputs = startInputs(hosts);
    const dependencies = {
      ...inputs,
      assignments: { ...inputs.assignments, vm2: pinned('vm2', 'nginx', '1.26.1'), vm4: { exists: false as const } },
    };
    const run = () =>
      startRollout.decide(startRollout.schema.parse(start), rolloutAggregate.initialState, { commandId: 'c-1', actor: 't', now: '', dependencies });
    expect(run).toThrowError(
      expect.objectContaining({
        code: 'PRECONDITION_FAILED',
        issues: [
          { path: 'vm2', message: 'its plan pins nginx at 1.26.1, not 1.24.0' },
          { path: 'vm4', message: 'has no assignment' },
        ],
      }) as never,
    );
    rollout([])
      .when(startRollout, { ...start, template: 'edge' }, { dependencies: startInputs(hosts) })
      .thenRejects('PRECONDITION_FAILED');
    rollout([])
      .when(startRollout, start, { dependencies: startInputs(hosts, ['1.24.0']) })
      .thenRejects('PRECONDITION_FAILED');
    expect(() => startRollout.schema.parse({ ...start, toVersion: '1.24.0' })).toThrow();
  });
});

describe('fleet.startWave and fleet.recordHostOutcome (the controller)', () => {
  it('starts the canary with its deadline, then a wave only after the one before is healthy; a redelivered start appends nothing', () => {
    rollout([started(hosts)])
      .when(startWave, { ...id, wave: 0 })
      .then([waveStarted(0, ['vm1'])]);
    rollout([started(hosts), waveStarted(0, ['vm1'])])
      .when(startWave, { ...id, wave: 1 })
      .thenRejects('ILLEGAL_TRANSITION');
    rollout([started(hosts), waveStarted(0, ['vm1'])])
      .when(startWave, { ...id, wave: 0 })
      .then([]);
    rollout(inWave1.slice(0, 3))
      .when(startWave, { ...id, wave: 2 })
      .thenRejects('ILLEGAL_TRANSITION');
    rollout([started(hosts)])
      .when(startWave, { rolloutId: 'nginx-7', wave: 0 })
      .thenRejects('NOT_FOUND');
  });

  it("a host's first report counts; a redelivered one, or one from a host not yet asked, does not", () => {
    rollout(inWave1)
      .when(recordHostOutcome, { ...id, host: 'vm2', outcome: 'healthy' })
      .then([reported('vm2', 1, 'healthy')]);
    rollout([...inWave1, reported('vm2', 1, 'healthy')])
      .when(recordHostOutcome, { ...id, host: 'vm2', outcome: 'failed' })
      .then([]);
    rollout(inWave1)
      .when(recordHostOutcome, { ...id, host: 'vm4', outcome: 'healthy' })
      .thenRejects('ILLEGAL_TRANSITION');
    rollout(inWave1)
      .when(recordHostOutcome, { ...id, host: 'elsewhere', outcome: 'healthy' })
      .thenRejects('NOT_FOUND');
  });

  it('a failed canary halts at once, and no later wave starts', () => {
    const canaryFailed = [started(hosts), waveStarted(0, ['vm1'])];
    rollout(canaryFailed)
      .when(recordHostOutcome, { ...id, host: 'vm1', outcome: 'failed' })
      .then([reported('vm1', 0, 'failed'), { type: 'RolloutHalted', data: { ...id, reason: 'canary_failed', failed: ['vm1'] } }]);
    rollout([...canaryFailed, reported('vm1', 0, 'failed'), { type: 'RolloutHalted', data: { ...id, reason: 'canary_failed', failed: ['vm1'] } }])
      .when(startWave, { ...id, wave: 1 })
      .thenRejects('ILLEGAL_TRANSITION');
  });

  it('maxConsecutiveFailures reports in a row trip the breaker mid-wave', () => {
    const wide = started(hosts, 1, { wavePercent: 100 });
    rollout([wide, waveStarted(0, ['vm1']), reported('vm1', 0, 'healthy'), waveStarted(1, ['vm2', 'vm3', 'vm4', 'vm5']), reported('vm2', 1, 'failed')])
      .when(recordHostOutcome, { ...id, host: 'vm3', outcome: 'timed-out' })
      .then([reported('vm3', 1, 'timed-out'), { type: 'RolloutHalted', data: { ...id, reason: 'breaker_tripped', failed: ['vm2', 'vm3'] } }]);
  });

  it('the last healthy report completes the rollout; a report about an ended rollout appends nothing', () => {
    const lastWave = [...inWave1, reported('vm2', 1, 'healthy'), reported('vm3', 1, 'healthy'), waveStarted(2, ['vm4', 'vm5']), reported('vm4', 2, 'healthy')];
    rollout(lastWave)
      .when(recordHostOutcome, { ...id, host: 'vm5', outcome: 'healthy' })
      .then([reported('vm5', 2, 'healthy'), { type: 'RolloutCompleted', data: id }]);
    rollout([...lastWave, started(hosts, 2)])
      .when(recordHostOutcome, { ...id, host: 'vm5', outcome: 'healthy' })
      .then([]);
  });
});

describe('pause, resume, continue, rollback and abort (operators)', () => {
  const halted: RolloutEvent[] = [
    ...inWave1,
    reported('vm2', 1, 'failed'),
    reported('vm3', 1, 'healthy'),
    { type: 'RolloutHalted', data: { ...id, reason: 'wave_failed', failed: ['vm2'] } },
  ];

  it('pause stops waves from starting, reports still count; resume starts them again; each twice is once', () => {
    const paused: RolloutEvent[] = [...inWave1, { type: 'RolloutPaused', data: id }];
    rollout(inWave1)
      .when(pauseRollout, id)
      .then([{ type: 'RolloutPaused', data: id }]);
    rollout(paused).when(pauseRollout, id).then([]);
    rollout([...paused, reported('vm2', 1, 'healthy'), reported('vm3', 1, 'healthy')])
      .when(startWave, { ...id, wave: 2 })
      .thenRejects('ILLEGAL_TRANSITION');
    rollout(paused)
      .when(recordHostOutcome, { ...id, host: 'vm2', outcome: 'healthy' })
      .then([reported('vm2', 1, 'healthy')]);
    rollout(paused)
      .when(resumeRollout, id)
      .then([{ type: 'RolloutResumed', data: id }]);
    rollout(inWave1).when(resumeRollout, id).then([]);
    rollout(halted).when(pauseRollout, id).thenRejects('ILLEGAL_TRANSITION');
  });

  it('continue accepts the failures: the next wave may start, and the accepted host does not halt its wave again', () => {
    const continued: RolloutEvent[] = [...halted, { type: 'RolloutContinued', data: { ...id, accepted: ['vm2'] } }];
    rollout(halted)
      .when(continueRollout, id)
      .then([{ type: 'RolloutContinued', data: { ...id, accepted: ['vm2'] } }]);
    rollout(continued).when(continueRollout, id).then([]);
    rollout(continued)
      .when(startWave, { ...id, wave: 2 })
      .then([waveStarted(2, ['vm4', 'vm5'])]);
  });

  it('continue after a breaker trip mid-wave: the wave ends on its pending hosts without halting for the accepted ones', () => {
    const wide = started(hosts, 1, { wavePercent: 100 });
    const tripped: RolloutEvent[] = [
      wide,
      waveStarted(0, ['vm1']),
      reported('vm1', 0, 'healthy'),
      waveStarted(1, ['vm2', 'vm3', 'vm4', 'vm5']),
      reported('vm2', 1, 'failed'),
      reported('vm3', 1, 'failed'),
      { type: 'RolloutHalted', data: { ...id, reason: 'breaker_tripped', failed: ['vm2', 'vm3'] } },
      { type: 'RolloutContinued', data: { ...id, accepted: ['vm2', 'vm3'] } },
      reported('vm4', 1, 'healthy'),
    ];
    rollout(tripped)
      .when(recordHostOutcome, { ...id, host: 'vm5', outcome: 'healthy' })
      .then([reported('vm5', 1, 'healthy'), { type: 'RolloutCompleted', data: id }]);
  });

  it('rollback targets exactly the hosts that reported the new version applied, and ends when each reported the old one', () => {
    const rollbackStarted: RolloutEvent = { type: 'RolloutRollbackStarted', data: { ...id, version: '1.24.0', targets: ['vm1', 'vm2', 'vm3'] } };
    rollout(halted).when(rollbackRollout, id).then([rollbackStarted]);
    rollout([...halted, rollbackStarted])
      .when(rollbackRollout, id)
      .then([]);
    const restoring: RolloutEvent[] = [...halted, rollbackStarted, { type: 'RolloutHostRestored', data: { ...id, host: 'vm1', outcome: 'healthy' } }];
    rollout(restoring)
      .when(recordHostRestored, { ...id, host: 'vm1', outcome: 'failed' })
      .then([]);
    rollout([...restoring, { type: 'RolloutHostRestored', data: { ...id, host: 'vm2', outcome: 'healthy' } }])
      .when(recordHostRestored, { ...id, host: 'vm3', outcome: 'timed-out' })
      .then([
        { type: 'RolloutHostRestored', data: { ...id, host: 'vm3', outcome: 'timed-out' } },
        { type: 'RolloutRolledBack', data: { ...id, restored: ['vm1', 'vm2'], failed: ['vm3'] } },
      ]);
    rollout(restoring)
      .when(recordHostRestored, { ...id, host: 'vm4', outcome: 'healthy' })
      .thenRejects('NOT_FOUND');
  });

  it('rollback waits for every started host to report; a timed-out canary has nothing to restore and rolls back at once', () => {
    const wide = started(hosts, 1, { wavePercent: 100, maxConsecutiveFailures: 1 });
    rollout([wide, waveStarted(0, ['vm1']), reported('vm1', 0, 'healthy'), waveStarted(1, ['vm2', 'vm3', 'vm4', 'vm5']), reported('vm2', 1, 'failed')])
      .when(rollbackRollout, id)
      .thenRejects('ILLEGAL_TRANSITION');
    rollout([
      started(hosts),
      waveStarted(0, ['vm1']),
      reported('vm1', 0, 'timed-out'),
      { type: 'RolloutHalted', data: { ...id, reason: 'canary_failed', failed: ['vm1'] } },
    ])
      .when(rollbackRollout, id)
      .then([
        { type: 'RolloutRollbackStarted', data: { ...id, version: '1.24.0', targets: [] } },
        { type: 'RolloutRolledBack', data: { ...id, restored: [], failed: [] } },
      ]);
    rollout(inWave1).when(rollbackRollout, id).thenRejects('ILLEGAL_TRANSITION');
  });

  it('abort ends the rollout from any status but an end; an ended rollout refuses the verbs', () => {
    rollout(halted)
      .when(abortRollout, id)
      .then([{ type: 'RolloutAborted', data: id }]);
    rollout([...halted, { type: 'RolloutAborted', data: id }])
      .when(abortRollout, id)
      .then([]);
    rollout([...halted, { type: 'RolloutAborted', data: id }])
      .when(continueRollout, id)
      .thenRejects('ILLEGAL_TRANSITION');
    rollout([...halted, { type: 'RolloutAborted', data: id }, started(hosts, 2)])
      .when(abortRollout, id)
      .thenRejects('ILLEGAL_TRANSITION');
  });
});
