import { APPROVERS_ID, SetApprovers, type ApproverEvent } from '../../../schemas/trust/approvals.ts';
import { defineCommand } from '../../commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { approversAggregate } from './approvers.ts';

/** `pki.setApprovers`: replaces the approver set; batches already open keep the rule they opened under. */
export const setApprovers = defineCommand({
  name: 'pki.setApprovers',
  schema: SetApprovers,
  aggregate: approversAggregate,
  aggregateId: () => APPROVERS_ID,
  decide(command, state): ApproverEvent[] {
    for (const a of command.approvers) {
      if (Buffer.from(a.publicKey, 'base64').length !== 32) throw new DomainError('VALIDATION_FAILED', `approver ${a.approverId}: publicKey must be 32 raw bytes`);
    }
    const next = { approvers: command.approvers, threshold: command.threshold, approvalTtlSeconds: command.approvalTtlSeconds };
    if (JSON.stringify(next) === JSON.stringify(state)) return [];
    return [{ type: 'ApproversSet', data: next }];
  },
});
