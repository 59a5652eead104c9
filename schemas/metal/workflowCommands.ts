import { z } from 'zod';
import { Ed25519Signature } from '../ed25519.ts';
import { CommandNonce } from '../agent/agentCommand.ts';
import { ResourceId } from '../ids.ts';
import { RefusalCount } from '../refusals.ts';
import { InstanceTarget, NodeOperation } from './workflow.ts';
import { ResultRejection } from './workflowEvents.ts';

export const WorkflowId = z.string().regex(/^wf-[0-9a-f]{12}$/);
const attempt = { workflowId: WorkflowId, stepIndex: z.number().int().nonnegative(), attempt: z.number().int().positive() };

/** `workflow.start` (internal): resolve the operation's profile into steps and schedule the first. `instance`: see `InstanceTarget`. */
export const StartWorkflow = z
  .object({
    workflowId: WorkflowId,
    nodeId: ResourceId,
    siteId: ResourceId,
    operation: NodeOperation,
    inputs: z.record(z.string(), z.unknown()),
    instance: InstanceTarget.optional(),
  })
  .strict();
export type StartWorkflow = z.infer<typeof StartWorkflow>;

/**
 * `workflow.startStep` (executor): an attempt begins; repeating the running attempt is a no-op (crash resume).
 * `nonce` is fresh per attempt; the first start records it and every agent command of the attempt derives its own
 * from it (`commandNonce`), so a resumed attempt sends the same commands.
 */
export const StartStep = z.object({ ...attempt, nonce: CommandNonce }).strict();
export type StartStep = z.infer<typeof StartStep>;

/**
 * `workflow.completeStep` (executor): the attempt succeeded; schedules the next step or completes the workflow.
 * Agent steps pass the agent's `SignedAgentResult` (base64): the decider verifies it again, and only a verified
 * `disk.wipe` result makes the step `attested`, whatever `output` claims.
 */
export const CompleteStep = z.object({ ...attempt, output: z.unknown(), signedResult: z.string().max(1_000_000).optional() }).strict();
export type CompleteStep = z.infer<typeof CompleteStep>;

/**
 * `workflow.rejectResult` (executor): a result on the attempt's result subject did not verify. It is recorded as
 * `AgentResultRejected` and refused; the attempt keeps waiting for a valid result until its deadline.
 */
export const RejectResult = z.object({ ...attempt, commandId: z.string().max(200), reason: ResultRejection, agentId: z.string().max(200).optional() }).strict();
export type RejectResult = z.infer<typeof RejectResult>;

/**
 * `workflow.countRejectedResults` (executor): results on the running attempt's subject that were refused without a
 * record of their own, counted per window. Recorded as `AgentResultsRejectedCounted`.
 */
export const CountRejectedResults = RefusalCount.extend({ ...attempt, commandId: z.string().max(200) }).strict();
export type CountRejectedResults = z.infer<typeof CountRejectedResults>;

/**
 * `workflow.failStep` (executor): the attempt failed. Fails the workflow when not retryable or when the step's
 * attempts are used up. `rejected` records an agent result that did not verify.
 */
export const FailStep = z
  .object({
    ...attempt,
    code: z.string().max(100),
    message: z.string().max(1000),
    retryable: z.boolean(),
    rejected: z.object({ commandId: z.string(), reason: ResultRejection }).optional(),
  })
  .strict();
export type FailStep = z.infer<typeof FailStep>;

/**
 * `workflow.cancel` (orchestrator, after `metal.cancel`): no new step starts. A running destructive step is waited
 * for (its outcome ends the workflow); otherwise the workflow ends now. Before the workflow started, it never will.
 */
export const CancelWorkflow = z.object({ workflowId: WorkflowId, nodeId: ResourceId, reason: z.string().min(1).max(500) }).strict();
export type CancelWorkflow = z.infer<typeof CancelWorkflow>;

/** `workflow.approve`: one approver's signature over the batch digest (see `approvalMessage`). */
export const ApproveBatch = z.object({ workflowId: WorkflowId, approverId: ResourceId, signature: Ed25519Signature }).strict();
export type ApproveBatch = z.infer<typeof ApproveBatch>;

/** `workflow.reject`: one approver's signed refusal; the workflow fails and nothing destructive is sent. */
export const RejectBatch = ApproveBatch.extend({ reason: z.string().min(1).max(500) }).strict();
export type RejectBatch = z.infer<typeof RejectBatch>;
