import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { workflowEvents, type WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { StepStatus, type ExistingWorkflow, type StepProgress, type WorkflowState } from '../../../schemas/metal/workflowState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

// The state's shape is the contract's (other modules read it through `workflowRef`); the fold is the engine's.
export {
  StepStatus,
  wipeAttestationOf,
  type ApprovalBatch,
  type ExistingWorkflow,
  type StepProgress,
  type WorkflowState,
} from '../../../schemas/metal/workflowState.ts';

const withStep = (state: ExistingWorkflow, index: number, change: Partial<StepProgress>): ExistingWorkflow => ({
  ...state,
  progress: state.progress.map((p, i) => (i === index ? { ...p, ...change } : p)),
});

/** One run of a profile against one node (`bc.evt.metal.workflow.<workflowId>`). */
export const workflowAggregate = defineAggregate<WorkflowState, WorkflowEvent>({
  module: 'metal',
  type: 'workflow',
  initialState: { exists: false },
  catalog: new EventCatalog(workflowEvents),
  evolve(state, event) {
    if (event.type === 'WorkflowStarted') {
      const progress = event.data.steps.map(() => ({
        status: StepStatus.pending,
        attempt: 0,
        output: null,
        error: null,
        attemptStartedAt: null,
        attemptsBefore: 0,
        nonce: null,
      }));
      return { exists: true, ...event.data, progress, status: 'running' };
    }
    if (event.type === 'WorkflowCancelled' && !state.exists) return { exists: false, cancelled: true };
    if (!state.exists) return state;
    switch (event.type) {
      case 'StepScheduled':
        return withStep(state, event.data.stepIndex, { status: 'scheduled' });
      case 'StepStarted':
        return withStep(state, event.data.stepIndex, {
          status: 'running',
          attempt: event.data.attempt,
          error: null,
          attemptStartedAt: event.data.startedAt ?? null,
          nonce: event.data.nonce ?? null,
        });
      case 'StepSucceeded':
        return withStep(state, event.data.stepIndex, { status: 'succeeded', attempt: event.data.attempt, output: event.data.output });
      case 'StepFailed': {
        const { code, message, retryable, attempt } = event.data;
        return withStep(state, event.data.stepIndex, { status: 'failed', attempt, error: { code, message, retryable } });
      }
      case 'AgentResultRejected':
      case 'AgentResultsRejectedCounted':
        return state;
      case 'ApprovalRequested': {
        const { digest, items, threshold, approverIds, expiresAt } = event.data;
        return { ...state, approval: { digest, stepIndexes: items.map((i) => i.stepIndex), threshold, approverIds, expiresAt, grantedBy: [], rejected: null } };
      }
      case 'ApprovalGranted':
        return state.approval ? { ...state, approval: { ...state.approval, grantedBy: [...state.approval.grantedBy, event.data.approverId] } } : state;
      case 'ApprovalRejected':
        return state.approval
          ? { ...state, approval: { ...state.approval, rejected: { approverId: event.data.approverId, reason: event.data.reason } } }
          : state;
      case 'WorkflowRewound': {
        const { fromStepIndex, toStepIndex, at } = event.data;
        // The lost step keeps counting its attempts (they bound how often the workflow restarts); the boot steps start over.
        const progress = state.progress.map((p, i) =>
          i < toStepIndex || i > fromStepIndex
            ? p
            : {
                ...p,
                status: StepStatus.pending,
                output: null,
                error: null,
                attemptStartedAt: null,
                attemptsBefore: i === fromStepIndex ? (p.attemptsBefore ?? 0) : p.attempt,
              },
        );
        return { ...state, progress, restartedAt: at };
      }
      case 'WorkflowCancelRequested':
        return { ...state, cancel: { reason: event.data.reason } };
      case 'WorkflowCancelled':
        return { ...state, status: 'cancelled', cancel: null };
      case 'WorkflowCompleted':
        return { ...state, status: 'completed' };
      case 'WorkflowFailed':
        return { ...state, status: 'failed' };
    }
  },
});

export type ApprovalStatus = 'not-needed' | 'pending' | 'approved' | 'expired' | 'rejected';

/** Whether step `stepIndex` may send its destructive commands now. */
export function approvalStatus(workflow: ExistingWorkflow, stepIndex: number, nowMs: number): ApprovalStatus {
  const batch = workflow.approval;
  if (!batch || !batch.stepIndexes.includes(stepIndex)) return 'not-needed';
  if (batch.rejected) return 'rejected';
  if (new Set(batch.grantedBy).size >= batch.threshold) return 'approved';
  return Date.parse(batch.expiresAt) <= nowMs ? 'expired' : 'pending';
}
