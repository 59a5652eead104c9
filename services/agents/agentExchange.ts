import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult, type VerifiedAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { RefusalCount } from '../../schemas/refusals.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { RefusalTally } from '../platform/refusalTally.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
import type { AgentLiveness } from './agentLiveness.ts';
import { ResultRejectedError, RetryableError } from '../../plugins/sdk/stepErrors.ts';
import type { StreamWatch } from './streamWatch.ts';

export interface AgentExchangeDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  repository: AggregateRepository;
  /** Signed results as they are stored, by result subject. */
  results: StreamWatch<StoredMsg>;
  /** How long a wait sleeps on the watch before it double-checks the stream. */
  recheckMs: number;
  /** Heartbeats of agents inside machines: a silent one fails the wait with `AGENT_LOST`. */
  liveness?: AgentLiveness;
}

export type AcceptedResult = Extract<VerifiedAgentResult, { ok: true }>['result'];

/** A result on a command's subject that did not verify: refused, and reported so the attempt can record it. */
export interface RejectedResult {
  readonly commandId: string;
  readonly reason: ResultRejectedError['reason'];
  /** Its stream sequence: one record per stored message, however often the attempt resumes. */
  readonly seq: number;
  /** The agent it names as its signer, when it could be read. */
  readonly agentId: string | undefined;
}

/** Refused results of one exchange recorded one by one per window, each the first of its signer; the rest are counted. */
const REJECTIONS_RECORDED_PER_WINDOW = 3;
const REJECTION_WINDOW_MS = 60_000;

/**
 * Sends one agent command and resolves its signed result once it verifies against the registered key of the agent
 * that signed it and matches the command (its nonce included). The command id is the JetStream message id, so a
 * repeated exchange of the same command stores it once; a verified result already stored (a resumed attempt) is used
 * without publishing at all. Waiting costs no polling: the process-wide result watch wakes the caller.
 *
 * A result that does not verify is refused; the wait goes on for a valid one (garbage on the subject cannot end the
 * step). The first refusal of each signer in a window (at most a few) goes to `onRejected`, to be recorded; the others
 * are counted and handed to `onRejectedCount` once per window and when the exchange ends, so whoever can publish on
 * the subject cannot grow the log with its attempts. Throws `RetryableError('STEP_TIMEOUT')` past `deadlineMs`, and
 * `RetryableError('AGENT_LOST')` when the agent inside the machine stops heartbeating (`agentLiveness.ts`). The
 * result's own `ok` is the caller's to judge (the bytes go to `onVerified` either way, as evidence).
 */
export async function exchangeAgentCommand(
  deps: AgentExchangeDeps,
  command: AgentCommand,
  options: {
    deadlineMs: number;
    signal: AbortSignal;
    onVerified?: (bytes: Uint8Array) => void;
    onRejected?: (rejected: RejectedResult) => Promise<void>;
    onRejectedCount?: (count: RefusalCount) => Promise<void>;
    /** The command was never sent before (its nonce is new): no direct get for a stored result before sending it. */
    neverSent?: boolean;
  },
): Promise<AcceptedResult> {
  const { commandId } = command;
  const resultSubject = acceptedSubjectOf(command);
  const judged = new Set<number>();
  const rejections = new RefusalTally({ windowMs: REJECTION_WINDOW_MS, recordsPerWindow: REJECTIONS_RECORDED_PER_WINDOW });
  const reportCounted = async (final: boolean) => {
    const count = rejections.take(Date.now(), { final });
    if (count) await options.onRejectedCount?.(count);
  };
  const judge = async (msg: StoredMsg): Promise<AcceptedResult | undefined> => {
    judged.add(msg.seq);
    try {
      return await verifiedResult(deps, command, msg.data, options.onVerified, 'seen');
    } catch (err) {
      if (!(err instanceof ResultRejectedError)) throw err;
      const ticket = rejections.admit(err.agentId || 'unreadable', Date.now());
      ticket.refused(err.reason);
      if (ticket.record) await options.onRejected?.({ commandId, reason: err.reason, seq: msg.seq, agentId: err.agentId });
      return undefined;
    }
  };
  const unjudgedStored = async (): Promise<AcceptedResult | undefined> => {
    for (let msg = await storedAfter(deps, resultSubject, 0); msg; msg = await storedAfter(deps, resultSubject, msg.seq)) {
      if (judged.has(msg.seq)) continue;
      const accepted = await judge(msg);
      if (accepted) return accepted;
    }
    return undefined;
  };
  // The subject carries the command's fresh nonce: whatever is stored there was published after the command was.
  // A result stored meanwhile by anything but the agent is still found: the watch sees it, the rechecks read it.
  try {
    let accepted = options.neverSent ? undefined : await unjudgedStored();
    if (!accepted) await sendAgentCommand(deps, command);
    using liveness = AgentCommandKinds[command.kind].runsOn === 'node' ? deps.liveness?.follow(command) : undefined;
    while (!accepted) {
      options.signal.throwIfAborted();
      const left = options.deadlineMs - Date.now();
      if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `no valid result of ${commandId} arrived before the step timeout`, { retryAfterMs: 0 });
      await liveness?.check();
      // The watch wakes us; a look at the stream now and then covers a result stored while this process was away.
      const woken = await deps.results.next(
        resultSubject,
        (m) => !judged.has(m.seq),
        Math.min(left, deps.recheckMs, liveness?.msUntilDue() ?? left),
        options.signal,
      );
      accepted = woken ? await judge(woken) : await unjudgedStored();
      await reportCounted(false);
    }
    return accepted;
  } finally {
    // What was counted and not yet reported is reported before the attempt's outcome is: the step is still running.
    await reportCounted(true).catch(() => undefined);
  }
}

/** The subject `command`'s result is stored on once the result intake accepted it (`resultIntake.ts`). */
export const acceptedSubjectOf = (command: AgentCommand): string =>
  Subjects.acceptedAgentResult(command.siteId, command.nodeId, command.commandId, command.nonce);

/** Publishes the command with its id as the JetStream message id (a repeat inside the duplicate window is dropped). */
export async function sendAgentCommand(deps: Pick<AgentExchangeDeps, 'js'>, command: AgentCommand): Promise<void> {
  const { siteId, nodeId } = command;
  const subject = AgentCommandKinds[command.kind].runsOn === 'site' ? Subjects.siteAgentCommands(siteId, nodeId) : Subjects.nodeAgentCommands(siteId, nodeId);
  await deps.js.publish(subject, JSON.stringify(command), { msgID: command.commandId });
}

/** The latest stored result on `command`'s subject, if its agent answered (one direct get). */
export async function storedResult(deps: Pick<AgentExchangeDeps, 'jsm'>, command: AgentCommand): Promise<StoredMsg | undefined> {
  return (await deps.jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: acceptedSubjectOf(command) }).catch(() => null)) ?? undefined;
}

/** The first message stored on `subject` after stream sequence `seq`, if any (one direct get). */
export async function storedAfter(deps: Pick<AgentExchangeDeps, 'jsm'>, subject: string, seq: number): Promise<StoredMsg | undefined> {
  return (await deps.jsm.direct.getMessage(Streams.agentResults.name, { seq: seq + 1, next_by_subj: subject }).catch(() => null)) ?? undefined;
}

/**
 * How fresh the signer's registered key must be: `read` reads the log now (the result intake, which decides what is
 * stored); `seen` takes a key the log confirmed within `LATEST_SEEN_MAX_AGE_MS` (1 s) and reads afresh only when it
 * refuses the result. The exchange verifies `seen`: a result on the accepted subject was just verified by the intake,
 * in the executor's own process against the same cache, so a read of its own would ask the log what it just answered.
 */
export type KeyFreshness = 'read' | 'seen';

/** Verifies result bytes against the signer's registered key and the command they answer. */
export async function verifiedResult(
  deps: Pick<AgentExchangeDeps, 'repository'>,
  command: AgentCommand,
  bytes: Uint8Array,
  onVerified?: (bytes: Uint8Array) => void,
  keys: KeyFreshness = 'read',
): Promise<AcceptedResult> {
  let agentId: string;
  try {
    agentId = decodeSignedResult(bytes).result.agentId;
  } catch {
    throw new ResultRejectedError(command.commandId, 'MALFORMED');
  }
  const judge = ({ state: agent }: { state: AgentState }) =>
    verifyAgentResult(bytes, command, (id) => (agent.exists && id === agent.agentId ? agent : undefined));
  const seen = keys === 'seen' ? judge(await deps.repository.latestSeen(agentAggregate, agentId)) : undefined;
  // A refusal is never taken from the cache: the key may have been registered since.
  const verdict = seen?.ok ? seen : await deps.repository.judged(agentAggregate, agentId, judge, (v) => v.ok);
  if (!verdict.ok) throw new ResultRejectedError(command.commandId, verdict.reason, agentId);
  onVerified?.(bytes);
  return verdict.result;
}
