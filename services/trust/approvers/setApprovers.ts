import { unusableEd25519Key } from '../../../schemas/ed25519.ts';
import { APPROVERS_ID, SetApprovers, type ApproverEvent } from '../../../schemas/trust/approvals.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { approversAggregate } from './approvers.ts';

/** Why `publicKey` cannot be an approver's key, or undefined when it can (`unusableEd25519Key`). */
export const unusableApproverKey = unusableEd25519Key;

/** `pki.setApprovers`: replaces the approver set; batches already open keep the rule they opened under. */
export const setApprovers = defineCommand({
  name: 'pki.setApprovers',
  exposure: ['admin'],
  schema: SetApprovers,
  aggregate: approversAggregate,
  aggregateId: () => APPROVERS_ID,
  decide(command, state): ApproverEvent[] {
    for (const a of command.approvers) {
      const unusable = unusableApproverKey(a.publicKey);
      if (unusable) throw new DomainError('VALIDATION_FAILED', `approver ${a.approverId}: ${unusable}`);
    }
    const next = { approvers: command.approvers, threshold: command.threshold, approvalTtlSeconds: command.approvalTtlSeconds };
    if (JSON.stringify(next) === JSON.stringify(state)) return [];
    return [{ type: 'ApproversSet', data: next }];
  },
});
