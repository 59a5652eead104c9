import { consumeBudget } from './budget/consume.ts';
import { haltAutonomy, pauseOwner, setPolicy } from './controls/commands.ts';
import { approveDecision, rejectDecision } from './decision/approval.ts';
import { expireDecision, recordOutcome, recordStarted, requireApproval } from './decision/lifecycle.ts';
import { openDecision } from './decision/open.ts';

/** Commands only the autonomy engine sends (over NATS). */
export const autonomyEngineCommands = [openDecision, expireDecision, requireApproval, recordStarted, recordOutcome, consumeBudget] as const;
/** Operator commands (`POST /v1/commands/autonomy.*`). */
export const autonomyOperatorCommands = [setPolicy, pauseOwner, haltAutonomy] as const;
/** Approvals: edge commands of the API's approval routes (approver and admin tokens). */
export const autonomyApprovalCommands = [approveDecision, rejectDecision] as const;
