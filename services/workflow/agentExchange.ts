import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult, type VerifiedAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { AggregateRepository } from '../commands/aggregateRepository.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
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
}

export type AcceptedResult = Extract<VerifiedAgentResult, { ok: true }>['result'];

/**
 * Sends one agent command and resolves its signed result once it verifies against the registered key of the agent
 * that signed it and matches the command. The command id is the JetStream message id, so a repeated exchange of
 * the same command stores it once; a result already stored is used without publishing at all. Waiting costs no
 * polling: the process-wide result watch wakes the caller.
 *
 * Throws `ResultRejectedError` for a result that does not verify, `RetryableError('STEP_TIMEOUT')` past `deadlineMs`.
 * The result's own `ok` is the caller's to judge (the bytes go to `onVerified` either way, as evidence).
 */
export async function exchangeAgentCommand(
  deps: AgentExchangeDeps,
  command: AgentCommand,
  options: { deadlineMs: number; signal: AbortSignal; onVerified?: (bytes: Uint8Array) => void },
): Promise<AcceptedResult> {
  const { commandId, siteId, nodeId } = command;
  const resultSubject = Subjects.agentResult(siteId, nodeId, commandId);
  const lastResult = () => deps.jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: resultSubject }).catch(() => null);
  if (!(await lastResult())) {
    const subject = AgentCommandKinds[command.kind].runsOn === 'site' ? Subjects.siteAgentCommands(siteId, nodeId) : Subjects.nodeAgentCommands(siteId, nodeId);
    await deps.js.publish(subject, JSON.stringify(command), { msgID: commandId });
  }
  let stored: StoredMsg | undefined;
  while (!stored) {
    options.signal.throwIfAborted();
    const left = options.deadlineMs - Date.now();
    if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `result of ${commandId} did not arrive before the step timeout`, { retryAfterMs: 0 });
    // The watch wakes us; a direct get now and then covers a result stored while this process was away.
    stored = (await deps.results.next(resultSubject, () => true, Math.min(left, deps.recheckMs), options.signal)) ?? (await lastResult()) ?? undefined;
  }
  const bytes = stored.data;
  let agentId: string;
  try {
    agentId = decodeSignedResult(bytes).result.agentId;
  } catch {
    throw new ResultRejectedError(commandId, 'MALFORMED');
  }
  const agent = (await deps.repository.load(agentAggregate, agentId)).state;
  const verdict = verifyAgentResult(bytes, command, (id) => (agent.exists && id === agent.agentId ? agent : undefined));
  if (!verdict.ok) throw new ResultRejectedError(commandId, verdict.reason);
  options.onVerified?.(bytes);
  return verdict.result;
}
