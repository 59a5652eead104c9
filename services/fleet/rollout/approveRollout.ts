import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import { ApproveRollout, moduleOfRollout } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { rolloutApprovalMessage } from '../../../schemas/trust/approvals.ts';
import { currentQuorum, type ApproversState } from '../../../schemas/trust/approversState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { rolloutAggregate, type RolloutRun, type RolloutState } from './rollout.ts';
import { runOf } from './rolloutPlan.ts';

/** Earlier rollouts of the module a signature is checked against to name a replay (older ones are only invalid). */
const REPLAY_LOOKBACK = 32;

/**
 * The approver whose signature this is, once it verifies over exactly this rollout and plan (`rolloutApprovalText`)
 * with a key of the approver set as the log has it now (an approver removed since the start does not count), for this
 * verdict (an approval is no rejection, nor the reverse). A signature that verifies for an earlier rollout of the
 * module is named a replay: the same plan comes back when a rolled-back rollout is started again, and its approval
 * (or rejection) must not carry over.
 */
function verifiedApprover(run: RolloutRun, command: ApproveRollout, quorum: ApproversState, verdict: Verdict): string {
  const key = quorum.approvers.find((a) => a.approverId === command.approverId);
  if (!key) {
    const why = quorum.approvers.length === 0 ? 'no approvers are set, so no signature can count' : 'not an approver';
    throw new DomainError('APPROVER_UNKNOWN', `${command.approverId}: ${why}`);
  }
  const signature = Buffer.from(command.signature, 'base64');
  const holds = (rolloutId: string) => signatureHolds(rolloutApprovalMessage(verdict, { rolloutId, planDigest: run.planDigest }), signature, key.publicKey);
  if (holds(run.rolloutId)) return key.approverId;
  const module = moduleOfRollout(run.rolloutId);
  const n = Number(run.rolloutId.slice(module.length + 1));
  for (let earlier = n - 1; earlier >= Math.max(1, n - REPLAY_LOOKBACK); earlier--) {
    if (holds(`${module}-${earlier}`)) {
      throw new DomainError('APPROVAL_REPLAYED', `the signature of ${key.approverId} ${verdict}s ${module}-${earlier}, not ${run.rolloutId}`);
    }
  }
  throw new DomainError('APPROVAL_SIGNATURE_INVALID', `signature of ${key.approverId} does not ${verdict} ${run.rolloutId} (plan ${run.planDigest})`);
}

type Verdict = 'approve' | 'reject';

/**
 * The rollout a verdict names and the approver who signed it: ILLEGAL_TRANSITION once a later rollout of its module
 * ran, PLAN_DIGEST_MISMATCH when the approver read another plan, then the signature as `verifiedApprover` checks it.
 */
export function signedVerdict(state: RolloutState, command: ApproveRollout, quorum: ApproversState, verdict: Verdict): { run: RolloutRun; approverId: string } {
  const found = runOf(state, command.rolloutId);
  if ('ended' in found) throw new DomainError('ILLEGAL_TRANSITION', `rollout ${command.rolloutId} has ended: a later rollout of its module ran`);
  const { run } = found;
  if (command.planDigest !== run.planDigest) {
    const read = verdict === 'approve' ? 'approved' : 'rejected';
    throw new DomainError('PLAN_DIGEST_MISMATCH', `rollout ${run.rolloutId} runs plan ${run.planDigest}, not the ${read} ${command.planDigest}`);
  }
  return { run, approverId: verifiedApprover(run, command, quorum, verdict) };
}

/**
 * Refuses an approval or rejection of a rollout that no longer awaits one: APPROVAL_EXPIRED once its window closed
 * (recorded or not: the controller's sweep may not have run yet), ILLEGAL_TRANSITION for any other status.
 */
export function assertAwaitingApproval(run: RolloutRun, now: string): void {
  if (
    run.status === 'approval-expired' ||
    (run.status === 'awaiting-approval' && run.approvalExpiresAt !== null && Date.parse(run.approvalExpiresAt) <= Date.parse(now))
  ) {
    throw new DomainError('APPROVAL_EXPIRED', `the approval request of rollout ${run.rolloutId} expired at ${run.approvalExpiresAt ?? '(unknown)'}`);
  }
  if (run.status !== 'awaiting-approval') throw new DomainError('ILLEGAL_TRANSITION', `rollout ${run.rolloutId} is ${run.status}, not awaiting approval`);
}

/**
 * `fleet.approveRollout` (approver tokens, `POST /v1/rollouts/:rolloutId/approve`): one approver's signature over the
 * rollout and its plan digest. The digest the approver read must be the rollout's (PLAN_DIGEST_MISMATCH), the signer
 * an approver (APPROVER_UNKNOWN), the signature over this rollout (APPROVAL_REPLAYED when it approves an earlier one,
 * APPROVAL_SIGNATURE_INVALID otherwise), within its approval window (APPROVAL_EXPIRED); each approver counts once, and
 * the threshold the start recorded approves the plan: `RolloutApproved`, after which the controller starts the canary.
 * Nothing is recorded for a refused approval.
 */
export const approveRollout = defineCommand({
  name: 'fleet.approveRollout',
  exposure: ['approver'],
  schema: ApproveRollout,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  dependencies: async (_command, load) => ({ quorum: await currentQuorum(load) }),
  decide(command, state, { dependencies, now }): RolloutEvent[] {
    const { run, approverId } = signedVerdict(state, command, dependencies.quorum, 'approve');
    // A redelivery of an approval that counted: nothing new, whatever the rollout did since.
    if (run.approvals.includes(approverId)) return [];
    assertAwaitingApproval(run, now);
    const { rolloutId, planDigest } = run;
    const events: RolloutEvent[] = [{ type: 'RolloutApprovalRecorded', data: { rolloutId, approverId, planDigest } }];
    if (run.approvals.length + 1 >= run.approvalsRequired) {
      events.push({ type: 'RolloutApproved', data: { rolloutId, planDigest, approvers: [...run.approvals, approverId] } });
    }
    return events;
  },
});
