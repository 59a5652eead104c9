import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { approverEvents, type ApproverEvent } from '../../../schemas/trust/approvals.ts';
import type { ApproversState } from '../../../schemas/trust/approversState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type { ApproversState } from '../../../schemas/trust/approversState.ts';

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
