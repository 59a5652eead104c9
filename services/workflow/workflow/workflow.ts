import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { NodeOperation, ProfileRef, ResolvedStep } from '../../../schemas/metal/workflow.ts';
import { workflowEvents, type WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

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
  /** Attempts made before the workflow last restarted from its boot: they do not count against the step's retries. */
  readonly attemptsBefore?: number;
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
  /** `cancelled`: the operation was cancelled before its workflow started, which then never starts. */
  | { readonly exists: false; readonly cancelled?: boolean }
  | {
      readonly exists: true;
      readonly workflowId: string;
      readonly nodeId: string;
      readonly siteId: string;
      readonly operation: NodeOperation;
      readonly profile: ProfileRef;
      readonly steps: readonly ResolvedStep[];
      readonly progress: readonly StepProgress[];
      readonly status: 'running' | 'completed' | 'failed' | 'cancelled';
      readonly startedAt: string;
      readonly approval?: ApprovalBatch | null;
      /** When the workflow last restarted from a boot (an agent was lost); agents registered before belong to an older boot. */
      readonly restartedAt?: string | null;
      /** A cancel that waits for the running destructive step to end. */
      readonly cancel?: { readonly reason: string } | null;
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

/**
 * Whether a `disk.wipe` step succeeded with a verified, signed result covering the node's disks; else why not (the
 * `unattestedReason` the wipe step recorded, or that no wipe step succeeded).
 */
export function wipeAttestationOf(workflow: WorkflowState): { attested: true } | { attested: false; reason: string } {
  if (!workflow.exists) return { attested: false, reason: 'no workflow' };
  const outputs = workflow.steps.flatMap((step, i) => {
    const p = workflow.progress[i];
    return step.id === 'disk.wipe' && p?.status === 'succeeded' ? [(p.output ?? {}) as { attested?: unknown; unattestedReason?: unknown }] : [];
  });
  if (outputs.some((o) => o.attested === true)) return { attested: true };
  const reason = outputs.map((o) => o.unattestedReason).find((r): r is string => typeof r === 'string');
  return { attested: false, reason: reason ?? 'no disk.wipe step succeeded' };
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
