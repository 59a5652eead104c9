import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult, type VerifiedAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { AggregateRepository } from '../commands/aggregateRepository.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
import type { AgentLiveness } from './agentLiveness.ts';
import { ResultRejectedError, RetryableError } from './stepErrors.ts';
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

/**
 * Sends one agent command and resolves its signed result once it verifies against the registered key of the agent
 * that signed it and matches the command. The command id is the JetStream message id, so a repeated exchange of
 * the same command stores it once; a result already stored is used without publishing at all. Waiting costs no
 * polling: the process-wide result watch wakes the caller.
 *
 * Throws `ResultRejectedError` for a result that does not verify, `RetryableError('STEP_TIMEOUT')` past `deadlineMs`,
 * `RetryableError('AGENT_LOST')` when the agent inside the machine stops heartbeating (`agentLiveness.ts`).
 * The result's own `ok` is the caller's to judge (the bytes go to `onVerified` either way, as evidence).
 */
export async function exchangeAgentCommand(
  deps: AgentExchangeDeps,
  command: AgentCommand,
  options: { deadlineMs: number; signal: AbortSignal; onVerified?: (bytes: Uint8Array) => void },
): Promise<AcceptedResult> {
  const { commandId } = command;
  const resultSubject = Subjects.agentResult(command.siteId, command.nodeId, commandId);
  if (!(await storedResult(deps, command))) await sendAgentCommand(deps, command);
  using liveness = AgentCommandKinds[command.kind].runsOn === 'node' ? deps.liveness?.follow(command) : undefined;
  let stored: StoredMsg | undefined;
  while (!stored) {
    options.signal.throwIfAborted();
    const left = options.deadlineMs - Date.now();
    if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `result of ${commandId} did not arrive before the step timeout`, { retryAfterMs: 0 });
    liveness?.check();
    // The watch wakes us; a direct get now and then covers a result stored while this process was away.
    stored = (await deps.results.next(resultSubject, () => true, Math.min(left, deps.recheckMs, liveness?.msUntilDue() ?? left), options.signal)) ?? (await storedResult(deps, command));
  }
  return verifiedResult(deps, command, stored.data, options.onVerified);
}

/** Publishes the command with its id as the JetStream message id (a repeat inside the duplicate window is dropped). */
export async function sendAgentCommand(deps: Pick<AgentExchangeDeps, 'js'>, command: AgentCommand): Promise<void> {
  const { siteId, nodeId } = command;
  const subject = AgentCommandKinds[command.kind].runsOn === 'site' ? Subjects.siteAgentCommands(siteId, nodeId) : Subjects.nodeAgentCommands(siteId, nodeId);
  await deps.js.publish(subject, JSON.stringify(command), { msgID: command.commandId });
}

/** The stored result of `command`, if its agent answered (one direct get). */
export async function storedResult(deps: Pick<AgentExchangeDeps, 'jsm'>, command: AgentCommand): Promise<StoredMsg | undefined> {
  const subject = Subjects.agentResult(command.siteId, command.nodeId, command.commandId);
  return (await deps.jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: subject }).catch(() => null)) ?? undefined;
}

/** Verifies result bytes against the signer's registered key and the command they answer. */
export async function verifiedResult(
  deps: Pick<AgentExchangeDeps, 'repository'>,
  command: AgentCommand,
  bytes: Uint8Array,
  onVerified?: (bytes: Uint8Array) => void,
): Promise<AcceptedResult> {
  let agentId: string;
  try {
    agentId = decodeSignedResult(bytes).result.agentId;
  } catch {
    throw new ResultRejectedError(command.commandId, 'MALFORMED');
  }
  const agent = (await deps.repository.load(agentAggregate, agentId)).state;
  const verdict = verifyAgentResult(bytes, command, (id) => (agent.exists && id === agent.agentId ? agent : undefined));
  if (!verdict.ok) throw new ResultRejectedError(command.commandId, verdict.reason);
  onVerified?.(bytes);
  return verdict.result;
}
