import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DecisionEvent } from '../../schemas/autonomy/decisionEvents.ts';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { planDigestOf } from '../../schemas/autonomy/plan.ts';
import { approvalText, decisionApprovalText } from '../../schemas/trust/approvalText.ts';
import { approveDecision, rejectDecision } from '../../services/autonomy/decision/approval.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { expireDecision, recordOutcome, recordStarted, requireApproval } from '../../services/autonomy/decision/lifecycle.ts';
import { openDecision } from '../../services/autonomy/decision/open.ts';
import { deciderSpec } from '../metal/spec.ts';
import { failedSignal, noControls, openedRetry, openRetry, policyOf, retryPlan } from './fixtures.ts';

const given = deciderSpec(decisionAggregate);
const id = decisionIdOf('retry', 'n1');
const deps = { dependencies: { controls: noControls } };
const noQuorum = { dependencies: { quorum: { approvers: [], threshold: 0 } } };
const rejected = (reason: 'rejected' | 'expired', cooldownUntil = '2026-12-02T13:00:00.000Z'): DecisionEvent => ({
  type: 'DecisionRejected',
  data: { decisionId: id, episode: 1, reason, by: reason === 'rejected' ? 'test' : null, note: reason === 'rejected' ? 'no' : null, cooldownUntil },
});

describe('autonomy.openDecision', () => {
  it('opens one episode for a new key with the declared disposition, the plan and its digest, expiring after the chain timeout', () => {
    given([]).when(openDecision, openRetry(), deps).then([openedRetry()]);
  });

  it('updates a pending request in place when the signal says something new, and ignores an identical repeat', () => {
    given([openedRetry()]).when(openDecision, openRetry(), deps).then([]);
    given([openedRetry()])
      .when(openDecision, openRetry('n1', 'p2', 'deploy failed at power.set: other'), deps)
      .then((events) => expect(events.map((e) => e.type)).toEqual(['DecisionUpdated']));
  });

  it('holds a key in cooldown after a rejection (1 h) and a timeout, then opens exactly the next episode', () => {
    given([openedRetry(), rejected('rejected')])
      .when(openDecision, openRetry(), deps)
      .then([]);
    given([openedRetry(), rejected('expired')])
      .when(openDecision, openRetry(), deps)
      .then([]);
    given([openedRetry(), rejected('rejected', '2026-12-02T11:59:59.000Z')])
      .when(openDecision, openRetry(), deps)
      .then((events) => expect(events).toMatchObject([{ type: 'DecisionOpened', data: { episode: 2 } }]));
  });

  it('maps every disposition: auto approves by policy, notify and block open no request, overrides apply', () => {
    const with_ = (disposition: 'auto' | 'notify' | 'block') => ({ dependencies: { controls: { ...noControls, overrides: { retry: disposition } } } });
    for (const d of ['auto', 'notify', 'block'] as const) {
      const [event] = given([])
        .when(openDecision, openRetry(), with_(d))
        .then(() => undefined);
      expect(event).toMatchObject({ data: { disposition: d, dispositionReason: 'override', expiresAt: null } });
      const state = decisionAggregate.evolve(decisionAggregate.initialState, event!);
      expect(state).toMatchObject({ status: d === 'auto' ? 'approved' : d === 'notify' ? 'notified' : 'blocked' });
    }
  });

  it('refuses a category without its declaration and any target of the control plane', () => {
    given([])
      .when(openDecision, { ...openRetry(), policy: policyOf('maintenance') }, deps)
      .thenRejects('NOT_PERMITTED');
    given([])
      .when(openDecision, { ...openRetry(), signal: { ...failedSignal(), controlPlane: true } }, deps)
      .thenRejects('NOT_PERMITTED');
  });

  it('forces require on the episode after an escalation, whatever the policy says', () => {
    const autoControls = { dependencies: { controls: { ...noControls, overrides: { retry: 'auto' as const } } } };
    const outcome: DecisionEvent = {
      type: 'DecisionOutcomeRecorded',
      data: { decisionId: id, episode: 1, passId: 'p9', effective: false, signalPresent: true, sensorOk: true, ineffectiveStreak: 3, escalated: true },
    };
    given([openedRetry(), outcome])
      .when(openDecision, openRetry(), autoControls)
      .then((events) => expect(events).toMatchObject([{ data: { disposition: 'require', dispositionReason: 'escalated', episode: 2 } }]));
  });
});

describe('approvals', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'jwk' }).x!;
  const approver = { approverId: 'alice', publicKey: Buffer.from(raw, 'base64url').toString('base64') };
  const digest = planDigestOf(retryPlan());
  const signed = (text: string) => ({ approverId: 'alice', signature: sign(null, Buffer.from(text), privateKey).toString('base64') });
  const quorum = { dependencies: { quorum: { approvers: [approver], threshold: 1 } } };

  const request = { decisionId: id, episode: 1, expiresAt: '2026-12-02T16:00:00.000Z', planDigest: digest };

  it('approves with a token when no quorum is set, recorded under that token', () => {
    given([openedRetry()])
      .when(approveDecision, { decisionId: id }, noQuorum)
      .then((events) =>
        expect(events).toMatchObject([
          { type: 'DecisionApprovalRecorded', data: { approverId: 'test', signed: false } },
          { type: 'DecisionApproved', data: { by: 'approvers' } },
        ]),
      );
  });

  it('refuses a signature it cannot verify when no quorum is set (issue 31, finding 3)', () => {
    given([openedRetry()])
      .when(approveDecision, { decisionId: id, signature: signed(decisionApprovalText('approve', request)) }, noQuorum)
      .thenRejects('APPROVER_UNKNOWN');
  });

  it('counts only signatures over this episode, expiry and plan digest toward the quorum', () => {
    given([openedRetry()]).when(approveDecision, { decisionId: id }, quorum).thenRejects('APPROVAL_SIGNATURE_INVALID');
    for (const other of [
      { planDigest: 'f'.repeat(64) },
      { episode: 2 },
      { expiresAt: '2026-12-02T17:00:00.000Z' },
      { decisionId: decisionIdOf('retry', 'n2') },
    ]) {
      given([openedRetry()])
        .when(approveDecision, { decisionId: id, signature: signed(decisionApprovalText('approve', { ...request, ...other })) }, quorum)
        .thenRejects('APPROVAL_SIGNATURE_INVALID');
    }
    // The plan digest alone (what was signed before issue 31) approves nothing: the next episode has the same plan.
    given([openedRetry()])
      .when(approveDecision, { decisionId: id, signature: signed(approvalText('approve', digest)) }, quorum)
      .thenRejects('APPROVAL_SIGNATURE_INVALID');
    given([openedRetry()])
      .when(approveDecision, { decisionId: id, signature: { ...signed(decisionApprovalText('approve', request)), approverId: 'mallory' } }, quorum)
      .thenRejects('APPROVER_UNKNOWN');
    given([openedRetry()])
      .when(approveDecision, { decisionId: id, signature: signed(decisionApprovalText('approve', request)) }, quorum)
      .then((events) =>
        expect(events).toMatchObject([
          { data: { approverId: 'alice', signed: true } },
          { type: 'DecisionApproved', data: { by: 'approvers', planDigest: digest } },
        ]),
      );
  });

  it('refuses an approval after expiry, before and after the sweep', () => {
    given([openedRetry('n1', 1, '2026-12-02T11:00:00.000Z')])
      .when(approveDecision, { decisionId: id }, noQuorum)
      .thenRejects('APPROVAL_EXPIRED');
    given([openedRetry(), rejected('expired')])
      .when(approveDecision, { decisionId: id }, noQuorum)
      .thenRejects('APPROVAL_EXPIRED');
    given([openedRetry(), rejected('rejected')])
      .when(approveDecision, { decisionId: id }, noQuorum)
      .thenRejects('ILLEGAL_TRANSITION');
  });

  it('rejects with the 1 h cooldown (4 h for advancement categories)', () => {
    given([openedRetry()])
      .when(rejectDecision, { decisionId: id, reason: 'not now' })
      .then((e) =>
        expect(e).toMatchObject([{ type: 'DecisionRejected', data: { reason: 'rejected', note: 'not now', cooldownUntil: '2026-12-02T13:00:00.000Z' } }]),
      );
  });
});

describe('engine lifecycle', () => {
  const autoOpened: DecisionEvent = { ...openedRetry(), data: { ...(openedRetry().data as object), disposition: 'auto', expiresAt: null } } as DecisionEvent;

  it('expires only a pending request past its expiry', () => {
    given([openedRetry()]).when(expireDecision, { decisionId: id, episode: 1 }).then([]);
    given([openedRetry('n1', 1, '2026-12-02T11:00:00.000Z')])
      .when(expireDecision, { decisionId: id, episode: 1 })
      .then([rejected('expired')]);
    given([openedRetry('n1', 1, '2026-12-02T11:00:00.000Z')])
      .when(expireDecision, { decisionId: id, episode: 2 })
      .then([]);
  });

  it('turns a policy approval into a request when the budget fails closed', () => {
    given([autoOpened])
      .when(requireApproval, { decisionId: id, episode: 1, reason: 'budget exhausted' })
      .then((events) => expect(events).toMatchObject([{ type: 'DecisionApprovalRequired', data: { expiresAt: '2026-12-02T16:00:00.000Z' } }]));
    given([openedRetry()]).when(requireApproval, { decisionId: id, episode: 1, reason: 'x' }).then([]);
  });

  const started: DecisionEvent = {
    type: 'DecisionRemediationStarted',
    data: { decisionId: id, episode: 1, commandName: 'metal.retry', commandId: 'c-1', settleUntil: '2026-12-02T11:58:30.000Z' },
  };
  const outcome = (signalPresent: boolean, sensorOk: boolean) => ({ decisionId: id, episode: 1, passId: 'p5', signalPresent, sensorOk });

  it('starts once and judges after the settle window: effective only with the signal absent and the sensor ok', () => {
    given([autoOpened])
      .when(recordStarted, { decisionId: id, episode: 1, commandName: 'metal.retry', commandId: 'c-1', settleMs: 90_000 })
      .then([{ ...started, data: { ...started.data, settleUntil: '2026-12-02T12:01:30.000Z' } }]);
    given([autoOpened, started]).when(recordStarted, { decisionId: id, episode: 1, commandName: 'metal.retry', commandId: 'c-1', settleMs: 90_000 }).then([]);
    given([autoOpened, started]).when(recordOutcome, outcome(false, false)).then([]);
    given([autoOpened, started])
      .when(recordOutcome, outcome(false, true))
      .then((e) => expect(e).toMatchObject([{ data: { effective: true, ineffectiveStreak: 0 } }]));
    given([autoOpened, started])
      .when(recordOutcome, outcome(true, true))
      .then((e) => expect(e).toMatchObject([{ data: { effective: false, ineffectiveStreak: 1, escalated: false } }]));
  });

  it('escalates at the third ineffective outcome in a row', () => {
    const ineffective = (episode: number, streak: number): DecisionEvent => ({
      type: 'DecisionOutcomeRecorded',
      data: { decisionId: id, episode, passId: 'p', effective: false, signalPresent: true, sensorOk: true, ineffectiveStreak: streak, escalated: streak >= 3 },
    });
    const ep = (n: number): DecisionEvent[] => [
      { ...autoOpened, data: { ...(autoOpened.data as object), episode: n } } as DecisionEvent,
      { ...started, data: { ...started.data, episode: n } },
    ];
    given([...ep(1), ineffective(1, 1), ...ep(2), ineffective(2, 2), ...ep(3)])
      .when(recordOutcome, { ...outcome(true, true), episode: 3 })
      .then((e) => expect(e).toMatchObject([{ data: { ineffectiveStreak: 3, escalated: true } }]));
  });
});
