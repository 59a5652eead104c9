import { setImmediate as afterPendingCallbacks } from 'node:timers/promises';
import { newNonce } from '../../schemas/agent/agentCommand.ts';
import type { CommandResult } from '../../schemas/api.ts';
import { stepAttemptId, type WorkMessage } from '../../schemas/metal/workflow.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { approvalStatus, workflowAggregate, type ApprovalStatus, type ExistingWorkflow, type WorkflowState } from './workflow/workflow.ts';

/** Runs one of the attempt's engine commands; undefined when it was refused (settled). */
export type StepCommandSender = (name: string, payload: unknown, commandId: string) => Promise<CommandResult | undefined>;

/** A started (or resumed) attempt: the workflow as it stands with the attempt running, and what the attempt keeps. */
export interface ClaimedAttempt {
  readonly kind: 'claimed';
  readonly wf: ExistingWorkflow;
  readonly attempt: number;
  /** `<workflowId>-s<index>-a<attempt>`: the agent command id and the prefix of the attempt's engine command ids. */
  readonly attemptId: string;
  readonly approval: ApprovalStatus;
  /** When the attempt first started (its deadline counts from there, however often it resumes). */
  readonly startedAt: string | null;
  /** The nonce the attempt started with; null for an attempt started before attempts had nonces. */
  readonly nonce: string | null;
  /**
   * This claim started the attempt (its nonce was made here and just stored): no agent has seen a command of it, so
   * nothing can be stored on its result subjects yet and a first exchange need not look there before sending.
   */
  readonly fresh: boolean;
}

/**
 * `settled`: nothing left to do for the work message (ack); `awaiting-approval`: look again later (nak); `behind`: the
 * log as read does not hold the scheduling the message was sent for yet (look again shortly).
 */
export type Claim = { readonly kind: 'settled' } | { readonly kind: 'awaiting-approval' } | { readonly kind: 'behind' } | ClaimedAttempt;

type Plan = { kind: 'settled' } | { kind: 'awaiting-approval' } | { kind: 'behind' } | { kind: 'start'; attempt: number; approval: ApprovalStatus };

/**
 * Starts the due attempt of a step (`workflow.startStep`), or resumes the running one as itself. The executor that ran
 * the previous step holds the workflow exactly as the next step finds it (its own `completeStep` scheduled it), so the
 * claim is decided on the snapshot this process holds, without a read: the start's append expects that snapshot's
 * sequence and is refused (then read again) when anything else was appended since. Only a snapshot that leads to
 * starting is trusted that way; any other answer from it (already done, waiting for approval, a refused start) is
 * decided again on the log.
 */
export async function claimAttempt(repository: AggregateRepository, send: StepCommandSender, work: WorkMessage): Promise<Claim> {
  const { workflowId, stepIndex } = work;
  // A read behind the message is read again at the stream leader before it is left for later.
  const notBehind = (wf: WorkflowState) => planAttempt(wf, work, Date.now()).kind !== 'behind';
  // The work message can arrive in the same socket read as the answer to the append that scheduled it (this process's
  // own `completeStep`), and is handled before that answer's continuation folded the append into the snapshot: one
  // turn of the event loop lets it, where a fresh read would cost a direct get (a fifth of the steps in the fleet bench).
  await afterPendingCallbacks();
  for (const fresh of [false, true]) {
    const snapshot = fresh
      ? await repository.loadAccepting(workflowAggregate, workflowId, notBehind)
      : repository.cachedOrInitial(workflowAggregate, workflowId);
    const plan = planAttempt(snapshot.state, work, Date.now());
    if (plan.kind !== 'start') {
      if (fresh) return plan;
      continue;
    }
    const attemptId = stepAttemptId(workflowId, stepIndex, plan.attempt);
    const started = await send('workflow.startStep', { workflowId, stepIndex, attempt: plan.attempt, nonce: newNonce() }, `${attemptId}-go`);
    if (!started) {
      if (fresh) return { kind: 'settled' };
      continue;
    }
    const wf = await runningState(repository, workflowId, stepIndex, plan.attempt);
    if (!wf) return { kind: 'settled' };
    const progress = wf.progress[stepIndex]!;
    // A resumed attempt keeps the deadline and the nonce it started with, however often the server or the executor went away.
    const startedEvent = started.events.find((e) => e.type === 'StepStarted')?.data as { startedAt?: string; nonce?: string } | undefined;
    const running = progress.status === 'running' && progress.attempt === plan.attempt;
    return {
      kind: 'claimed',
      wf,
      attempt: plan.attempt,
      attemptId,
      approval: plan.approval,
      startedAt: startedEvent?.startedAt ?? (running ? progress.attemptStartedAt : null),
      nonce: startedEvent?.nonce ?? (running ? progress.nonce : null),
      fresh: startedEvent?.nonce !== undefined && !started.duplicate,
    };
  }
  return { kind: 'settled' };
}

function planAttempt(wf: WorkflowState, work: WorkMessage, nowMs: number): Plan {
  const progress = wf.exists ? wf.progress[work.stepIndex] : undefined;
  // The message is sent once its `StepScheduled` is stored, which counts the step's attempts one up. A read that does
  // not show that (a direct get answered by a replica still catching up) is behind the log, not a reason to drop it.
  if (!wf.exists || (progress?.status === 'pending' && progress.attempt < work.attempt)) return { kind: 'behind' };
  // Already decided (a duplicate or a stale redelivery): nothing left to do for this message.
  if (wf.status !== 'running' || !progress || progress.status === 'succeeded' || progress.status === 'pending') return { kind: 'settled' };
  // Quorum: a destructive step waits, unstarted, until its batch collected its signatures.
  const approval = approvalStatus(wf, work.stepIndex, nowMs);
  if (approval === 'pending') return { kind: 'awaiting-approval' };
  // A running attempt is resumed as itself; a scheduled step (first run, or again after a restart from its boot) or a
  // failed one (retryable, else the workflow would be over) gets the next number.
  return { kind: 'start', attempt: progress.status === 'running' ? progress.attempt : progress.attempt + 1, approval };
}

/**
 * The workflow with the attempt running, as the start left it: the snapshot this process holds after the command
 * (it appended it, or decided it on a fresh read), read from the log only when the start was answered otherwise
 * (a duplicate of a start stored by another process).
 */
async function runningState(repository: AggregateRepository, workflowId: string, stepIndex: number, attempt: number): Promise<ExistingWorkflow | undefined> {
  const isRunning = (wf: WorkflowState) => wf.exists && wf.progress[stepIndex]?.status === 'running' && wf.progress[stepIndex]?.attempt === attempt;
  const held = repository.cachedOrInitial(workflowAggregate, workflowId).state;
  const wf = isRunning(held) ? held : (await repository.load(workflowAggregate, workflowId)).state;
  return wf.exists && wf.progress[stepIndex] ? wf : undefined;
}
