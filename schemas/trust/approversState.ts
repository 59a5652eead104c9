import { aggregateRef, type AggregateRef } from '../aggregateRef.ts';
import { APPROVERS_ID, type Approver } from './approvals.ts';

export interface ApproversState {
  readonly approvers: readonly Approver[];
  readonly threshold: number;
  readonly approvalTtlSeconds: number;
}

/** What other modules read of the approver set (`bc.evt.trust.approvers.fleet`): workflow quorum and autonomy approvals. */
export const approversRef = aggregateRef<ApproversState>('trust', 'approvers');

/**
 * The approver set every decision it gates reads: always from the log, never a cached copy. A workflow started on a
 * quorum this process saw before the operator set or raised it would run its destructive steps without the approvals
 * now required, and an approver just removed must not count.
 */
export const currentQuorum = (
  load: (ref: AggregateRef<ApproversState>, id: string, options: { fresh: true }) => Promise<ApproversState>,
): Promise<ApproversState> => load(approversRef, APPROVERS_ID, { fresh: true });
