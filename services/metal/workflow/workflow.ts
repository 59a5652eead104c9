import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { NodeOperation, ProfileRef, ResolvedStep } from '../../../schemas/metal/workflow.ts';
import { workflowEvents, type WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineAggregate } from '../../commands/commandDefinition.ts';

export const StepStatus = { pending: 'pending', scheduled: 'scheduled', running: 'running', succeeded: 'succeeded', failed: 'failed' } as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];

export interface StepProgress {
  readonly status: StepStatus;
  /** The latest attempt (0 before the first starts). */
  readonly attempt: number;
  readonly output: unknown;
  readonly error: { readonly code: string; readonly message: string; readonly retryable: boolean } | null;
  /** When the latest attempt started (null before the first, or when its event predates the field). */
  readonly attemptStartedAt: string | null;
  /** The latest attempt's nonce, from which its agent commands derive theirs (null when its event predates it). */
  readonly nonce: string | null;
}

/** The quorum batch of a workflow that sends destructive commands (absent when no quorum applied at its start). */
export interface ApprovalBatch {
  readonly digest: string;
  readonly stepIndexes: readonly number[];
  readonly threshold: number;
  readonly approverIds: readonly string[];
  readonly expiresAt: string;
  readonly grantedBy: readonly string[];
  readonly rejected: { readonly approverId: string; readonly reason: string } | null;
}

export type WorkflowState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly workflowId: string;
      readonly nodeId: string;
      readonly siteId: string;
      readonly operation: NodeOperation;
      readonly profile: ProfileRef;
      readonly steps: readonly ResolvedStep[];
      readonly progress: readonly StepProgress[];
      readonly status: 'running' | 'completed' | 'failed';
      readonly startedAt: string;
      readonly approval?: ApprovalBatch | null;
    };

export type ExistingWorkflow = Extract<WorkflowState, { exists: true }>;

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
      const progress = event.data.steps.map(() => ({ status: StepStatus.pending, attempt: 0, output: null, error: null, attemptStartedAt: null, nonce: null }));
      return { exists: true, ...event.data, progress, status: 'running' };
    }
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
        return state;
      case 'ApprovalRequested': {
        const { digest, items, threshold, approverIds, expiresAt } = event.data;
        return { ...state, approval: { digest, stepIndexes: items.map((i) => i.stepIndex), threshold, approverIds, expiresAt, grantedBy: [], rejected: null } };
      }
      case 'ApprovalGranted':
        return state.approval ? { ...state, approval: { ...state.approval, grantedBy: [...state.approval.grantedBy, event.data.approverId] } } : state;
      case 'ApprovalRejected':
        return state.approval ? { ...state, approval: { ...state.approval, rejected: { approverId: event.data.approverId, reason: event.data.reason } } } : state;
      case 'WorkflowCompleted':
        return { ...state, status: 'completed' };
      case 'WorkflowFailed':
        return { ...state, status: 'failed' };
    }
  },
});

/** True when a `disk.wipe` step succeeded with a verified, signed result. */
export function hasAttestedWipe(workflow: WorkflowState): boolean {
  if (!workflow.exists) return false;
  return workflow.steps.some((step, i) => {
    const p = workflow.progress[i];
    return step.id === 'disk.wipe' && p?.status === 'succeeded' && (p.output as { attested?: unknown } | null)?.attested === true;
  });
}

export type ApprovalStatus = 'not-needed' | 'pending' | 'approved' | 'expired' | 'rejected';

/** Whether step `stepIndex` may send its destructive commands now. */
export function approvalStatus(workflow: ExistingWorkflow, stepIndex: number, nowMs: number): ApprovalStatus {
  const batch = workflow.approval;
  if (!batch || !batch.stepIndexes.includes(stepIndex)) return 'not-needed';
  if (batch.rejected) return 'rejected';
  if (new Set(batch.grantedBy).size >= batch.threshold) return 'approved';
  return Date.parse(batch.expiresAt) <= nowMs ? 'expired' : 'pending';
}
