import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { RefusalCount } from '../refusals.ts';
import { declarationsBeforeV2 } from './stepDeclarations.ts';
import { InstanceTarget, NodeOperation, ProfileRef, ResolvedStep } from './workflow.ts';

const step = { workflowId: z.string(), stepIndex: z.number().int().nonnegative() };

/** Why a signed agent result was refused (`verifyAgentResult`). */
export const ResultRejection = z.enum(['MALFORMED', 'UNSIGNED', 'UNKNOWN_AGENT', 'FORGED', 'MISMATCHED', 'NOT_AUTHORISED']);

/**
 * v2: each step carries its declared behaviour (`attests`, `records`). v1 steps had none: the engine recognised three
 * ids instead, so the upcaster gives those ids the declarations they had implicitly (`declarationsBeforeV2`).
 */
export const WorkflowStarted = defineEvent(
  'WorkflowStarted',
  z.object({
    workflowId: z.string(),
    nodeId: z.string(),
    siteId: z.string(),
    operation: NodeOperation,
    profile: ProfileRef,
    steps: z.array(ResolvedStep).min(1),
    /** When the workflow began: `wait.agentJoined` only counts agents registered after it. */
    startedAt: z.string(),
    /** Set when the workflow runs against a VPS instance (`InstanceTarget`); absent for a node. */
    instance: InstanceTarget.optional(),
  }),
  { version: 2, upcasters: { 1: (data) => withDeclarationsBeforeV2(data) } },
);

function withDeclarationsBeforeV2(data: unknown): unknown {
  const d = data as { steps?: unknown };
  if (!Array.isArray(d.steps)) return data;
  return {
    ...(data as object),
    steps: d.steps.map((s: unknown) => {
      const id = (s as { id?: unknown } | null)?.id;
      const implicit = typeof id === 'string' && Object.hasOwn(declarationsBeforeV2, id) ? declarationsBeforeV2[id] : undefined;
      return implicit ? { ...(s as object), ...implicit } : s;
    }),
  };
}

/** The step is due: the orchestrator publishes its work message. */
export const StepScheduled = defineEvent('StepScheduled', z.object({ ...step, stepId: z.string(), attempt: z.number().int().positive() }));
/**
 * `startedAt` (absent on events written before it existed) anchors the attempt's deadline when it is resumed;
 * `nonce` (likewise) is the attempt's, from which its agent commands derive theirs.
 */
export const StepStarted = defineEvent(
  'StepStarted',
  z.object({ ...step, stepId: z.string(), attempt: z.number().int().positive(), startedAt: z.string().optional(), nonce: z.string().optional() }),
);
/** `output` is the step's result; for an agent step the verified payload (plus `attested: true` for a wipe). */
export const StepSucceeded = defineEvent('StepSucceeded', z.object({ ...step, stepId: z.string(), attempt: z.number().int().positive(), output: z.unknown() }));
export const StepFailed = defineEvent(
  'StepFailed',
  z.object({ ...step, stepId: z.string(), attempt: z.number().int().positive(), code: z.string(), message: z.string(), retryable: z.boolean() }),
);
/**
 * A signed agent result that did not verify: refused, and kept here as the audit of it. `agentId` is the signer it
 * names (its key verified when the reason is NOT_AUTHORISED: an agent answering what is not its to answer).
 */
export const AgentResultRejected = defineEvent(
  'AgentResultRejected',
  z.object({ ...step, commandId: z.string(), reason: ResultRejection, agentId: z.string().optional() }),
);
/**
 * Results refused on a command's subject beyond the first few of each signer (`RefusalTally`), counted instead of
 * recorded one by one: whoever can publish on the subject cannot grow the log with its attempts. `source` is the
 * signer a result names (`unreadable` when it names none); `reasons` are `ResultRejection`s.
 */
export const AgentResultsRejectedCounted = defineEvent('AgentResultsRejectedCounted', RefusalCount.extend({ ...step, commandId: z.string() }));
/**
 * The workflow sends destructive commands and the fleet has a quorum rule: these steps wait until `threshold`
 * distinct approvers signed `digest` (sha256 of the workflow, node and items), before `expiresAt`.
 */
export const ApprovalRequested = defineEvent(
  'ApprovalRequested',
  z.object({
    workflowId: z.string(),
    digest: z.string(),
    items: z.array(z.object({ stepIndex: z.number().int().nonnegative(), stepId: z.string() })).min(1),
    threshold: z.number().int().positive(),
    approverIds: z.array(z.string()),
    expiresAt: z.string(),
  }),
);
export const ApprovalGranted = defineEvent('ApprovalGranted', z.object({ workflowId: z.string(), approverId: z.string(), digest: z.string() }));
export const ApprovalRejected = defineEvent(
  'ApprovalRejected',
  z.object({ workflowId: z.string(), approverId: z.string(), digest: z.string(), reason: z.string() }),
);
/**
 * The agent inside the machine was lost while step `fromStepIndex` ran (`code`: `AGENT_LOST`), or the boot a
 * `wait.agentJoined` waited for was (`BOOT_LOST`, `STEP_TIMEOUT`): steps `toStepIndex` (the boot) to `fromStepIndex`
 * run again, each with its next attempt number. Agents that registered before `at` belong to the lost boot.
 */
export const WorkflowRewound = defineEvent(
  'WorkflowRewound',
  z.object({
    workflowId: z.string(),
    fromStepIndex: z.number().int().nonnegative(),
    toStepIndex: z.number().int().nonnegative(),
    code: z.string(),
    at: z.string(),
  }),
);
/** `metal.cancel` arrived while a destructive step ran: it finishes (or fails) first, then the workflow is cancelled. */
export const WorkflowCancelRequested = defineEvent(
  'WorkflowCancelRequested',
  z.object({ workflowId: z.string(), reason: z.string(), waitingForStep: z.number().int().nonnegative() }),
);
/**
 * The workflow was cancelled: no step runs after this. `stepIndex`: the first step not done (null when the workflow never
 * started); `started`: whether any step attempt ever started, i.e. whether the machine may have been touched.
 */
export const WorkflowCancelled = defineEvent(
  'WorkflowCancelled',
  z.object({ workflowId: z.string(), nodeId: z.string(), reason: z.string(), stepIndex: z.number().int().nonnegative().nullable(), started: z.boolean() }),
);
export const WorkflowCompleted = defineEvent('WorkflowCompleted', z.object({ workflowId: z.string() }));
export const WorkflowFailed = defineEvent(
  'WorkflowFailed',
  z.object({ workflowId: z.string(), failedStep: z.string(), stepIndex: z.number().int().nonnegative(), code: z.string(), reason: z.string() }),
);

export const workflowEvents = [
  WorkflowStarted,
  StepScheduled,
  StepStarted,
  StepSucceeded,
  StepFailed,
  AgentResultRejected,
  AgentResultsRejectedCounted,
  ApprovalRequested,
  ApprovalGranted,
  ApprovalRejected,
  WorkflowRewound,
  WorkflowCancelRequested,
  WorkflowCancelled,
  WorkflowCompleted,
  WorkflowFailed,
] as const;
export type WorkflowEvent = EventOf<(typeof workflowEvents)[number]>;
