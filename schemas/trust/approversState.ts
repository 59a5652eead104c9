import { aggregateRef } from '../aggregateRef.ts';
import type { Approver } from './approvals.ts';

export interface ApproversState {
  readonly approvers: readonly Approver[];
  readonly threshold: number;
  readonly approvalTtlSeconds: number;
}

/** What other modules read of the approver set (`bc.evt.trust.approvers.fleet`): workflow quorum and autonomy approvals. */
export const approversRef = aggregateRef<ApproversState>('trust', 'approvers');
