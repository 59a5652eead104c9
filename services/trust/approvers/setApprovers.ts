import { ed25519 } from '@noble/curves/ed25519.js';
import { APPROVERS_ID, SetApprovers, type ApproverEvent } from '../../../schemas/trust/approvals.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { approversAggregate } from './approvers.ts';

/**
 * Why `publicKey` (base64 of 32 bytes) cannot be an approver's key, or undefined when it can. A small-order point (the
 * all-zero key among them) verifies signatures that prove nothing about any private key, so it must never count
 * towards a quorum; a non-canonical or off-curve encoding is no key at all.
 */
export function unusableApproverKey(publicKey: string): string | undefined {
  const raw = Buffer.from(publicKey, 'base64');
  if (raw.length !== 32) return 'publicKey must be 32 raw bytes';
  let point;
  try {
    point = ed25519.Point.fromBytes(raw);
  } catch {
    return 'publicKey is not a canonical Ed25519 point';
  }
  if (point.isSmallOrder() || !point.isTorsionFree()) return 'publicKey is a small-order (or mixed-order) point';
  return undefined;
}

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
