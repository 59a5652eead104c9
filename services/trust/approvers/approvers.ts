import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { approverEvents, type Approver, type ApproverEvent } from '../../../schemas/trust/approvals.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export interface ApproversState {
  readonly approvers: readonly Approver[];
  readonly threshold: number;
  readonly approvalTtlSeconds: number;
}

/** Who may approve destructive batches, and how many must (`bc.evt.trust.approvers.fleet`). Threshold 0: no quorum. */
export const approversAggregate = defineAggregate<ApproversState, ApproverEvent>({
  module: 'trust',
  type: 'approvers',
  initialState: { approvers: [], threshold: 0, approvalTtlSeconds: 3_600 },
  catalog: new EventCatalog(approverEvents),
  evolve(_state, event) {
    return { ...event.data };
  },
});
