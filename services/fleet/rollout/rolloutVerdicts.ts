import { moduleOfRollout, RejectRollout, RolloutCommand } from '../../../schemas/fleet/rolloutCommands.ts';
import type { RolloutEvent } from '../../../schemas/fleet/rolloutEvents.ts';
import { currentQuorum } from '../../../schemas/trust/approversState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { assertAwaitingApproval, signedVerdict } from './approveRollout.ts';
import { rolloutAggregate } from './rollout.ts';
import { runOf } from './rolloutPlan.ts';

/**
 * `fleet.rejectRollout` (approver tokens, `POST /v1/rollouts/:rolloutId/reject`): one approver's signature over
 * `rolloutApprovalText('reject', { rolloutId, planDigest })` ends a rollout awaiting approval (`RolloutRejected`, status
 * `rejected`): no wave ever starts, whatever the others signed. One approver's no is enough, as it is for a workflow's
 * batch: the threshold says how many must agree before hosts change, not how many may stop it. The same refusals as an
 * approval (PLAN_DIGEST_MISMATCH, APPROVER_UNKNOWN, APPROVAL_REPLAYED, APPROVAL_SIGNATURE_INVALID — an approval's
 * signature is not a rejection's), APPROVAL_EXPIRED past its window, ILLEGAL_TRANSITION once it was approved or ended.
 * The same approver's rejection delivered again appends nothing.
 */
export const rejectRollout = defineCommand({
  name: 'fleet.rejectRollout',
  exposure: ['approver'],
  schema: RejectRollout,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  dependencies: async (_command, load) => ({ quorum: await currentQuorum(load) }),
  decide(command, state, { dependencies, now }): RolloutEvent[] {
    const { run, approverId } = signedVerdict(state, command, dependencies.quorum, 'reject');
    if (run.status === 'rejected' && run.rejectedBy === approverId) return [];
    assertAwaitingApproval(run, now);
    return [{ type: 'RolloutRejected', data: { rolloutId: run.rolloutId, approverId, planDigest: run.planDigest } }];
  },
});

/**
 * `fleet.expireRolloutApproval` (the rollout controller, on its tick): a rollout still awaiting approval past its
 * window ends `approval-expired` (`RolloutApprovalExpired`), no host touched; a later approval is refused
 * (APPROVAL_EXPIRED). Before the window closes it is refused (ILLEGAL_TRANSITION: the controller's clock ran ahead, and
 * it asks again on a later tick); a rollout approved, rejected or aborted in time, or already expired, appends nothing.
 */
export const expireRolloutApproval = defineCommand({
  name: 'fleet.expireRolloutApproval',
  exposure: ['engine'],
  schema: RolloutCommand,
  aggregate: rolloutAggregate,
  aggregateId: (command) => moduleOfRollout(command.rolloutId),
  decide(command, state, { now }): RolloutEvent[] {
    const found = runOf(state, command.rolloutId);
    if ('ended' in found) return [];
    const { run } = found;
    if (run.status !== 'awaiting-approval' || run.approvalExpiresAt === null) return [];
    if (Date.parse(run.approvalExpiresAt) > Date.parse(now)) {
      throw new DomainError('ILLEGAL_TRANSITION', `the approval window of rollout ${run.rolloutId} is open until ${run.approvalExpiresAt}`);
    }
    return [{ type: 'RolloutApprovalExpired', data: { rolloutId: run.rolloutId, expiresAt: run.approvalExpiresAt } }];
  },
});
