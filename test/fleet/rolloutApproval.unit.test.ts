import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EventCatalog } from '../../schemas/eventCatalog.ts';
import { rolloutEvents, type RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { rolloutApprovalMessage } from '../../schemas/trust/approvals.ts';
import type { ApproversState } from '../../schemas/trust/approversState.ts';
import { approveRollout } from '../../services/fleet/rollout/approveRollout.ts';
import { startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { abortRollout, pauseRollout } from '../../services/fleet/rollout/operatorCommands.ts';
import { rolloutAggregate } from '../../services/fleet/rollout/rollout.ts';
import { startRollout } from '../../services/fleet/rollout/startRollout.ts';
import { deciderSpec } from '../metal/spec.ts';
import { options, started, startInputs, waveStarted } from './rolloutLog.ts';

const rollout = deciderSpec(rolloutAggregate);
const hosts = ['vm1', 'vm2', 'vm3'];
const start = { module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...options };

function approverKey(approverId: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { approverId, privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}
const alice = approverKey('alice');
const bob = approverKey('bob');
const carol = approverKey('carol');
const quorum = (threshold: number, keys = [alice, bob]): ApproversState => ({
  approvers: keys.map(({ approverId, publicKey }) => ({ approverId, publicKey })),
  threshold,
  approvalTtlSeconds: 3_600,
});

/** A signed approval as `rollouts approve` sends it: over the rollout id and the plan digest. */
const approval = (key: { approverId: string; privateKey: KeyObject }, rolloutId: string, planDigest: string, sentFor = rolloutId) => ({
  rolloutId: sentFor,
  planDigest,
  approverId: key.approverId,
  signature: sign(null, rolloutApprovalMessage('approve', { rolloutId, planDigest }), key.privateKey).toString('base64'),
});

const awaiting = (n = 1, required = 2) => started(hosts, n, {}, required);
const digestOf = (event: RolloutEvent) => (event.data as { planDigest: string }).planDigest;
const digest = digestOf(awaiting());
const recorded = (approverId: string, rolloutId = 'nginx-1'): RolloutEvent => ({
  type: 'RolloutApprovalRecorded',
  data: { rolloutId, approverId, planDigest: digest },
});

describe('fleet.startRollout under an approver quorum (a require decision)', () => {
  it('records the plan and awaits the threshold of approvals; without a quorum it runs as it starts', () => {
    rollout([])
      .when(startRollout, start, { dependencies: startInputs(hosts, undefined, quorum(2)) })
      .then([awaiting()]);
    expect(rollout([awaiting()]).state.current).toMatchObject({ status: 'awaiting-approval', approvalsRequired: 2, approvals: [] });
    expect(rollout([started(hosts)]).state.current).toMatchObject({ status: 'running', approvalsRequired: 0 });
  });

  it('a RolloutStarted stored before approvals existed (v1) reads as a rollout that ran at once', () => {
    const { approvalsRequired: _, ...v1 } = started(hosts).data as Record<string, unknown>;
    const read = new EventCatalog(rolloutEvents).read({ type: 'RolloutStarted', version: 1, data: v1 });
    expect(read).toEqual(started(hosts));
    expect(rollout([read]).state.current).toMatchObject({ status: 'running' });
  });

  it('no wave starts and no operator verb but abort applies before the approval; the same plan again appends nothing', () => {
    rollout([awaiting()]).when(startWave, { rolloutId: 'nginx-1', wave: 0 }).thenRejects('ILLEGAL_TRANSITION');
    rollout([awaiting()]).when(pauseRollout, { rolloutId: 'nginx-1' }).thenRejects('ILLEGAL_TRANSITION');
    rollout([awaiting()])
      .when(abortRollout, { rolloutId: 'nginx-1' })
      .then([{ type: 'RolloutAborted', data: { rolloutId: 'nginx-1' } }]);
    rollout([awaiting()])
      .when(startRollout, start, { dependencies: startInputs(hosts, undefined, quorum(2)) })
      .then([]);
  });
});

describe('fleet.approveRollout', () => {
  const deps = { dependencies: { quorum: quorum(2) } };

  it('counts each approver once; the threshold approves exactly the plan, and then the canary may start', () => {
    rollout([awaiting()])
      .when(approveRollout, approval(alice, 'nginx-1', digest), deps)
      .then([recorded('alice')]);
    rollout([awaiting(), recorded('alice')])
      .when(approveRollout, approval(alice, 'nginx-1', digest), deps)
      .then([]);
    const approved: RolloutEvent = { type: 'RolloutApproved', data: { rolloutId: 'nginx-1', planDigest: digest, approvers: ['alice', 'bob'] } };
    rollout([awaiting(), recorded('alice')])
      .when(approveRollout, approval(bob, 'nginx-1', digest), deps)
      .then([recorded('bob'), approved]);
    rollout([awaiting(), recorded('alice'), recorded('bob'), approved])
      .when(startWave, { rolloutId: 'nginx-1', wave: 0 })
      .then([waveStarted(0, ['vm1'])]);
    // A redelivered approval after the start changes nothing; a late approver is told the rollout is no longer waiting.
    rollout([awaiting(), recorded('alice'), recorded('bob'), approved])
      .when(approveRollout, approval(bob, 'nginx-1', digest), deps)
      .then([]);
    rollout([awaiting(), recorded('alice'), recorded('bob'), approved])
      .when(approveRollout, approval(carol, 'nginx-1', digest), { dependencies: { quorum: quorum(2, [alice, bob, carol]) } })
      .thenRejects('ILLEGAL_TRANSITION');
  });

  it('refuses an approval of another digest, even one validly signed over it', () => {
    const other = 'f'.repeat(64);
    rollout([awaiting()])
      .when(approveRollout, approval(alice, 'nginx-1', other), deps)
      .thenRejects('PLAN_DIGEST_MISMATCH');
    // Signed over the other digest but sent as this one's: the signature does not hold for what runs.
    rollout([awaiting()])
      .when(approveRollout, { ...approval(alice, 'nginx-1', other), planDigest: digest }, deps)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
  });

  it('refuses a key that is not an approver (or no longer one), and a signature by another key', () => {
    rollout([awaiting()])
      .when(approveRollout, approval(carol, 'nginx-1', digest), deps)
      .thenRejects('APPROVER_UNKNOWN');
    rollout([awaiting()])
      .when(approveRollout, approval(alice, 'nginx-1', digest), { dependencies: { quorum: quorum(1, [bob]) } })
      .thenRejects('APPROVER_UNKNOWN');
    rollout([awaiting()])
      .when(approveRollout, { ...approval(carol, 'nginx-1', digest), approverId: 'alice' }, deps)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
  });

  it("refuses an earlier rollout's approval replayed on a retry of the same plan, and an approval of a rollout that ended", () => {
    const aborted: RolloutEvent = { type: 'RolloutAborted', data: { rolloutId: 'nginx-1' } };
    const retry = [awaiting(), aborted, awaiting(2)];
    expect(digestOf(awaiting(2))).toBe(digest);
    rollout(retry)
      .when(approveRollout, approval(alice, 'nginx-1', digest, 'nginx-2'), deps)
      .thenRejects('APPROVAL_REPLAYED');
    rollout(retry)
      .when(approveRollout, approval(alice, 'nginx-1', digest), deps)
      .thenRejects('ILLEGAL_TRANSITION');
    rollout(retry)
      .when(approveRollout, approval(alice, 'nginx-2', digest), deps)
      .then([recorded('alice', 'nginx-2')]);
    rollout([awaiting()])
      .when(approveRollout, approval(alice, 'nginx-9', digest), deps)
      .thenRejects('NOT_FOUND');
  });
});
