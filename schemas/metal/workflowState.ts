import { aggregateRef } from '../aggregateRef.ts';
import type { InstanceTarget, NodeOperation, ProfileRef, ResolvedStep } from './workflow.ts';

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
      /** The VPS instance the workflow runs against; absent for a node. */
      readonly instance?: InstanceTarget;
      readonly approval?: ApprovalBatch | null;
      /** When the workflow last restarted from a boot (an agent was lost); agents registered before belong to an older boot. */
      readonly restartedAt?: string | null;
      /** A cancel that waits for the running destructive step to end. */
      readonly cancel?: { readonly reason: string } | null;
    };

export type ExistingWorkflow = Extract<WorkflowState, { exists: true }>;

/**
 * Whether a step that attests a wipe (`attests: 'wipe'`, e.g. `disk.wipe`) succeeded with a verified, signed result
 * covering the node's disks; else why not (the `unattestedReason` the wipe step recorded, or that none succeeded).
 */
export function wipeAttestationOf(workflow: WorkflowState): { attested: true } | { attested: false; reason: string } {
  if (!workflow.exists) return { attested: false, reason: 'no workflow' };
  const outputs = workflow.steps.flatMap((step, i) => {
    const p = workflow.progress[i];
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it; the rule's inference differs here
    return step.attests === 'wipe' && p?.status === 'succeeded' ? [(p.output ?? {}) as { attested?: unknown; unattestedReason?: unknown }] : [];
  });
  if (outputs.some((o) => o.attested === true)) return { attested: true };
  const reason = outputs.map((o) => o.unattestedReason).find((r): r is string => typeof r === 'string');
  return { attested: false, reason: reason ?? 'no wipe step succeeded' };
}

/** What another module may read of a workflow (`bc.evt.metal.workflow.<workflowId>`). */
export const workflowRef = aggregateRef<WorkflowState>('metal', 'workflow');
