import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { idFor } from '../../schemas/ids.ts';
import { rolloutApprovalMessage } from '../../schemas/trust/approvals.ts';
import type { ApproversState } from '../../schemas/trust/approversState.ts';
import { approveRollout } from '../../services/fleet/rollout/approveRollout.ts';
import { startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { rolloutAggregate } from '../../services/fleet/rollout/rollout.ts';
import { expireRolloutApproval, rejectRollout } from '../../services/fleet/rollout/rolloutVerdicts.ts';
import { startRollout } from '../../services/fleet/rollout/startRollout.ts';
import { deciderSpec } from '../metal/spec.ts';
import { givenInputs } from './rolloutControllerSpec.ts';
import { options, started, startInputs } from './rolloutLog.ts';

const rollout = deciderSpec(rolloutAggregate);
const hosts = ['vm1', 'vm2', 'vm3'];
/** The spec's clock: every decision below is taken at this instant. */
const NOW = Date.parse('2026-12-02T12:00:00.000Z');

function approverKey(approverId: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { approverId, privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}
const alice = approverKey('alice');
const bob = approverKey('bob');
const carol = approverKey('carol');
const quorum = (threshold: number, keys = [alice, bob], approvalTtlSeconds = 3_600): ApproversState => ({
  approvers: keys.map(({ approverId, publicKey }) => ({ approverId, publicKey })),
  threshold,
  approvalTtlSeconds,
});
const deps = { dependencies: { quorum: quorum(2) } };

/** A signed verdict as `rollouts approve|reject` sends it: over the rollout id and the plan digest. */
const verdict = (v: 'approve' | 'reject', key: { approverId: string; privateKey: KeyObject }, rolloutId: string, planDigest: string, sentFor = rolloutId) => ({
  rolloutId: sentFor,
  planDigest,
  approverId: key.approverId,
  signature: sign(null, rolloutApprovalMessage(v, { rolloutId, planDigest }), key.privateKey).toString('base64'),
});

const at = (ms: number) => new Date(ms).toISOString();
const awaiting = (n = 1, expiresAt = at(NOW + 3_600_000)) => started(hosts, n, {}, 2, expiresAt);
const digest = (awaiting().data as { planDigest: string }).planDigest;
const recorded = (approverId: string): RolloutEvent => ({ type: 'RolloutApprovalRecorded', data: { rolloutId: 'nginx-1', approverId, planDigest: digest } });
const rejected = (approverId: string, rolloutId = 'nginx-1'): RolloutEvent => ({
  type: 'RolloutRejected',
  data: { rolloutId, approverId, planDigest: digest },
});
const approved: RolloutEvent = { type: 'RolloutApproved', data: { rolloutId: 'nginx-1', planDigest: digest, approvers: ['alice', 'bob'] } };
const expired = (expiresAt: string): RolloutEvent => ({ type: 'RolloutApprovalExpired', data: { rolloutId: 'nginx-1', expiresAt } });

describe('a rollout approval window', () => {
  it("closes the quorum's approvalTtlSeconds after the start; a rollout that needs no approval has none", () => {
    const start = { module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...options };
    rollout([])
      .when(startRollout, start, { dependencies: startInputs(hosts, undefined, quorum(2, [alice, bob], 600)) })
      .then([awaiting(1, at(NOW + 600_000))]);
    rollout([])
      .when(startRollout, start, { dependencies: startInputs(hosts) })
      .then([started(hosts)]);
  });

  it('past it the rollout ends approval-expired, and the module may start another; before it, the expiry is refused', () => {
    const past = at(NOW - 1);
    const given = rollout([awaiting(1, past), recorded('alice')]);
    given.when(expireRolloutApproval, { rolloutId: 'nginx-1' }).then([expired(past)]);
    const after = rollout([awaiting(1, past), recorded('alice'), expired(past)]);
    expect(after.state.current).toMatchObject({ status: 'approval-expired' });
    after.when(expireRolloutApproval, { rolloutId: 'nginx-1' }).then([]);
    after.when(approveRollout, verdict('approve', bob, 'nginx-1', digest), deps).thenRejects('APPROVAL_EXPIRED');
    after.when(rejectRollout, verdict('reject', bob, 'nginx-1', digest), deps).thenRejects('APPROVAL_EXPIRED');
    after.when(startWave, { rolloutId: 'nginx-1', wave: 0 }).thenRejects('ILLEGAL_TRANSITION');
    after
      .when(
        startRollout,
        { module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...options },
        { dependencies: startInputs(hosts, undefined, quorum(2)) },
      )
      .then([awaiting(2)]);
    // The window still open: refused, so the controller asks again on a later tick.
    rollout([awaiting()]).when(expireRolloutApproval, { rolloutId: 'nginx-1' }).thenRejects('ILLEGAL_TRANSITION');
    // Approved, rejected or aborted in time, or needing no approval: nothing to expire.
    rollout([awaiting(1, past), recorded('alice'), recorded('bob'), approved])
      .when(expireRolloutApproval, { rolloutId: 'nginx-1' })
      .then([]);
    rollout([awaiting(1, past), rejected('bob')])
      .when(expireRolloutApproval, { rolloutId: 'nginx-1' })
      .then([]);
    rollout([started(hosts)])
      .when(expireRolloutApproval, { rolloutId: 'nginx-1' })
      .then([]);
  });

  it('an approval that arrives after the window closed is refused even before the expiry is recorded', () => {
    rollout([awaiting(1, at(NOW)), recorded('alice')])
      .when(approveRollout, verdict('approve', bob, 'nginx-1', digest), deps)
      .thenRejects('APPROVAL_EXPIRED');
    // A redelivered approval that counted in time still appends nothing.
    rollout([awaiting(1, at(NOW)), recorded('alice')])
      .when(approveRollout, verdict('approve', alice, 'nginx-1', digest), deps)
      .then([]);
  });
});

describe('fleet.rejectRollout', () => {
  it("one approver's signed rejection ends the rollout, even after another approved; no wave starts and no approval counts after", () => {
    rollout([awaiting(), recorded('alice')])
      .when(rejectRollout, verdict('reject', bob, 'nginx-1', digest), deps)
      .then([rejected('bob')]);
    const after = rollout([awaiting(), recorded('alice'), rejected('bob')]);
    expect(after.state.current).toMatchObject({ status: 'rejected', rejectedBy: 'bob', approvals: ['alice'] });
    after.when(rejectRollout, verdict('reject', bob, 'nginx-1', digest), deps).then([]);
    after.when(rejectRollout, verdict('reject', alice, 'nginx-1', digest), deps).thenRejects('ILLEGAL_TRANSITION');
    after.when(approveRollout, verdict('approve', bob, 'nginx-1', digest), deps).thenRejects('ILLEGAL_TRANSITION');
    after.when(startWave, { rolloutId: 'nginx-1', wave: 0 }).thenRejects('ILLEGAL_TRANSITION');
    after
      .when(
        startRollout,
        { module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...options },
        { dependencies: startInputs(hosts, undefined, quorum(2)) },
      )
      .then([awaiting(2)]);
  });

  it('refuses with the approval refusals: another digest, a non-approver, an approval signature sent as a rejection, a replay', () => {
    const other = 'f'.repeat(64);
    rollout([awaiting()])
      .when(rejectRollout, verdict('reject', alice, 'nginx-1', other), deps)
      .thenRejects('PLAN_DIGEST_MISMATCH');
    rollout([awaiting()])
      .when(rejectRollout, verdict('reject', carol, 'nginx-1', digest), deps)
      .thenRejects('APPROVER_UNKNOWN');
    // The verdict is in the text signed: an approval is no rejection, and a rejection approves nothing.
    rollout([awaiting()])
      .when(rejectRollout, verdict('approve', alice, 'nginx-1', digest), deps)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
    rollout([awaiting()])
      .when(approveRollout, verdict('reject', alice, 'nginx-1', digest), deps)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
    rollout([awaiting()])
      .when(rejectRollout, { ...verdict('reject', carol, 'nginx-1', digest), approverId: 'alice' }, deps)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
    // nginx-1's rejection replayed against the retry of the same plan.
    const retry = [awaiting(), rejected('alice'), awaiting(2)];
    rollout(retry)
      .when(rejectRollout, verdict('reject', alice, 'nginx-1', digest, 'nginx-2'), deps)
      .thenRejects('APPROVAL_REPLAYED');
    rollout(retry)
      .when(rejectRollout, verdict('reject', alice, 'nginx-2', digest), deps)
      .then([rejected('alice', 'nginx-2')]);
  });

  it('refuses a rejection of a rollout already approved, past its window, or never awaiting approval', () => {
    rollout([awaiting(), recorded('alice'), recorded('bob'), approved])
      .when(rejectRollout, verdict('reject', alice, 'nginx-1', digest), deps)
      .thenRejects('ILLEGAL_TRANSITION');
    rollout([awaiting(1, at(NOW - 1))])
      .when(rejectRollout, verdict('reject', alice, 'nginx-1', digest), deps)
      .thenRejects('APPROVAL_EXPIRED');
    rollout([started(hosts)])
      .when(rejectRollout, verdict('reject', alice, 'nginx-1', (started(hosts).data as { planDigest: string }).planDigest), deps)
      .thenRejects('ILLEGAL_TRANSITION');
  });
});

describe('the rollout controller closes approval windows', () => {
  const expire = { command: 'fleet.expireRolloutApproval', payload: { rolloutId: 'nginx-1' }, commandId: idFor('rollout-approval-expiry', 'nginx-1') };
  const ev = (event: RolloutEvent) => ({ type: 'event', event }) as const;
  const tick = (now: number) => ({ type: 'tick', now }) as const;

  it('asks for the expiry on the first tick past the window, and for nothing before it or once approved, rejected or expired', () => {
    const window = at(NOW + 60_000);
    givenInputs([ev(awaiting(1, window))])
      .when(tick(NOW + 59_999))
      .then([]);
    givenInputs([ev(awaiting(1, window))])
      .when(tick(NOW + 60_000))
      .then([{ key: 'nginx-1', effects: [expire], coalesce: true }]);
    givenInputs([ev(awaiting(1, window)), ev(recorded('alice')), ev(recorded('bob')), ev(approved)])
      .when(tick(NOW + 120_000))
      .then([]);
    givenInputs([ev(awaiting(1, window)), ev(rejected('bob'))])
      .when(tick(NOW + 120_000))
      .then([]);
    givenInputs([ev(awaiting(1, window)), ev(expired(window))])
      .when(tick(NOW + 120_000))
      .then([]);
    // A rollout stored before approvals expired (no window) waits for its approvers.
    givenInputs([ev(awaiting(1, null as never))])
      .when(tick(NOW + 86_400_000))
      .then([]);
  });
});
