import { AgentCommand, AgentCommandKinds, AgentCommandParams } from '../../schemas/agent/agentCommand.ts';
import type { NodeLogStream } from '../../schemas/agent/nodeLog.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { CommandHeartbeats } from './commandHeartbeats.ts';
import { agentErrorCodeOf } from './errors.ts';
import type { CommandJournal } from './journal.ts';
import type { NodeLogPublisher } from './nodeLogPublisher.ts';
import type { ResultPublisher } from './resultPublisher.ts';

/** Given to an executor: a heartbeat for long work and the agent's stop signal (power lost, shutdown). */

/**
 * The BMC monitor reads each resting node's power every minute: two lines a probe would push a node's real lines out
 * of its window in days, and a good reading tells an operator nothing. A failed one (the BMC unreachable) is logged.
 */
const readsLoggedOnlyWhenFailed: ReadonlySet<AgentCommand['kind']> = new Set(['power.get']);
export interface ExecutionContext {
  heartbeat(): void;
  signal: AbortSignal;
  /**
   * A line for the node's log (BC_LOGS), tagged with the running command; absent when the agent prints no log.
   * Never a param, a URL (blob URLs are capabilities), a credential or a result payload: only what the work did.
   */
  output?(stream: NodeLogStream, text: string): void;
}

/** What an agent can run: which commands are its own, and how to execute one (returns the result payload). */
export interface AgentExecutor {
  /** undefined when the command is this agent's to run, else why not. */
  refuse(command: AgentCommand): string | undefined;
  execute(command: AgentCommand, params: Record<string, unknown>, ctx: ExecutionContext): Promise<unknown>;
}

/** What happened to one delivery. Every outcome but `aborted` is final: the message can be acked. */
export type RunOutcome = 'executed' | 'failed' | 'republished' | 'interrupted' | 'expired' | 'rejected' | 'alreadyAnswered' | 'notAddressed' | 'aborted';

/** Signs, publishes and looks up results: a ResultPublisher, or a fake in tests. */
export type ResultSink = Pick<ResultPublisher, 'sign' | 'publish' | 'existing'>;

export interface RunnerDeps {
  /** This agent's id: a command addressed to another agent is left to it, unanswered. */
  agentId?: string;
  journal: CommandJournal;
  results: ResultSink;
  executor: AgentExecutor;
  log: Logger;
  /** Agents inside a machine say they are alive while a command runs (`commandHeartbeats.ts`). */
  heartbeats?: CommandHeartbeats;
  /** Where the node's log lines go: a command's start and end, and what its executor prints (`ctx.output`). */
  logs?: Pick<NodeLogPublisher, 'say'>;
  now?: () => number;
}

function parseCommand(data: Uint8Array): { command: AgentCommand } | { invalid: Partial<AgentCommand> | undefined; reason: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return { invalid: undefined, reason: 'command is not JSON' };
  }
  const parsed = AgentCommand.safeParse(raw);
  if (parsed.success) return { command: parsed.data };
  const r = raw as Partial<AgentCommand>;
  const answerable = ['commandId', 'kind', 'nodeId', 'siteId', 'nonce'].every((k) => typeof (r as Record<string, unknown>)[k] === 'string');
  return { invalid: answerable ? r : undefined, reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
}

/**
 * Handles one delivery of an agent command with write-ahead semantics: a finished id re-publishes its journaled
 * result; a destructive id that was started but never finished is answered INTERRUPTED (the machine may be half
 * way through it, a human or the workflow decides); a command past `notAfter` is answered EXPIRED. Only then is
 * `started` made durable, the command run, and the signed result journaled before it is published.
 */
export async function runCommand(data: Uint8Array, ctx: ExecutionContext, deps: RunnerDeps): Promise<RunOutcome> {
  const { journal, results, executor, log } = deps;
  const now = deps.now ?? Date.now;
  const parsed = parseCommand(data);
  if (!('command' in parsed)) {
    log.warn({ reason: parsed.reason, commandId: parsed.invalid?.commandId }, 'invalid agent command');
    if (!parsed.invalid) return 'rejected';
    const c = parsed.invalid as AgentCommand;
    // Ids that cannot form a result subject get no answer; a redelivery loop would not change that.
    await results.publish(c, results.sign(c, { ok: false, errorCode: 'INVALID_COMMAND', errorMessage: parsed.reason })).catch((err: unknown) => {
      log.warn({ err, commandId: c.commandId }, 'invalid agent command could not be answered');
    });
    return 'rejected';
  }
  const command = parsed.command;
  // Several agents may read one machine's subject (a ramdisk, an installed host's node agent): only the addressee
  // answers, so no one else's refusal lands on the result subject.
  if (command.agentId !== undefined && deps.agentId !== undefined && command.agentId !== deps.agentId) {
    log.info({ commandId: command.commandId, kind: command.kind, addressee: command.agentId }, 'agent command addressed to another agent; skipped');
    return 'notAddressed';
  }
  const destructive = command.destructive || AgentCommandKinds[command.kind].destructive;
  const answer = async (outcome: Parameters<ResultSink['sign']>[1]): Promise<void> => {
    const bytes = results.sign(command, outcome);
    journal.finished(command.commandId, command.kind, destructive, bytes, now());
    await results.publish(command, bytes);
  };

  const entry = journal.get(command.commandId);
  if (entry?.state === 'finished') {
    await results.publish(command, entry.resultBytes);
    return 'republished';
  }
  if (entry?.state === 'started' && destructive) {
    await answer({
      ok: false,
      errorCode: 'INTERRUPTED',
      errorMessage: `${command.kind} was started at ${new Date(entry.startedAtMs).toISOString()} and never finished; not run again`,
    });
    return 'interrupted';
  }
  if (!entry) {
    // No journal entry but a stored result: this agent's state was lost or another agent answered. Never re-run.
    const stored = await results.existing(command);
    if (stored) {
      journal.finished(command.commandId, command.kind, destructive, stored, now());
      return 'alreadyAnswered';
    }
  }
  const refusal = executor.refuse(command);
  // Answering is safe: the command arrived on this agent's own subject, so no other agent will answer it, and a
  // fast WRONG_AGENT beats a step waiting out its timeout.
  if (refusal) {
    await answer({ ok: false, errorCode: 'WRONG_AGENT', errorMessage: refusal });
    return 'rejected';
  }
  if (Date.parse(command.notAfter) < now()) {
    await answer({ ok: false, errorCode: 'EXPIRED', errorMessage: `notAfter ${command.notAfter} has passed` });
    return 'expired';
  }
  const params = AgentCommandParams[command.kind].safeParse(command.params);
  if (!params.success) {
    await answer({ ok: false, errorCode: 'INVALID_COMMAND', errorMessage: params.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    return 'rejected';
  }

  journal.started(command.commandId, command.kind, destructive, now());
  let outcome: Parameters<ResultSink['sign']>[1];
  const stopHeartbeats = deps.heartbeats?.whileRunning(command);
  const logs = deps.logs;
  const say = (stream: NodeLogStream, text: string) => logs?.say({ nodeId: command.nodeId, commandId: command.commandId, stream, text });
  const quiet = readsLoggedOnlyWhenFailed.has(command.kind);
  const startedAt = now();
  if (!quiet) say('stdout', `${command.kind} started (command ${command.commandId})`);
  try {
    outcome = { ok: true, payload: await executor.execute(command, params.data, logs ? { ...ctx, output: say } : ctx) };
  } catch (err) {
    // Stopped mid-way (power lost, shutdown): leave `started` in place and the message unacked, as a crash would.
    if (ctx.signal.aborted) {
      say('stderr', `${command.kind} stopped: the agent is going down`);
      return 'aborted';
    }
    const errorCode = agentErrorCodeOf(err);
    log.warn({ commandId: command.commandId, kind: command.kind, errorCode, err }, 'agent command failed');
    outcome = { ok: false, errorCode, errorMessage: err instanceof Error ? err.message : String(err) };
  } finally {
    stopHeartbeats?.();
  }
  const took = `${((now() - startedAt) / 1_000).toFixed(1)} s`;
  // The exit: ok, or the stable error code and message the signed result carries too (never its payload).
  if (outcome.ok) {
    if (!quiet) say('stdout', `${command.kind} finished ok in ${took}`);
  } else say('stderr', `${command.kind} failed after ${took}: ${outcome.errorCode}: ${outcome.errorMessage}`);
  await answer(outcome);
  return outcome.ok ? 'executed' : 'failed';
}
