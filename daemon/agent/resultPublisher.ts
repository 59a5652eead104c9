import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { decodeSignedResult, signAgentResult, type AgentResultData } from '../../schemas/agent/agentResultCodec.ts';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { AgentIdentity } from './identity.ts';

/** What the result intake answers when the result itself is the problem (`schemas/errorCodes.ts`). */
const FINAL_REFUSALS: ReadonlySet<string> = new Set(['RESULT_REFUSED', 'RESULT_ALREADY_STORED', 'RESULT_SUBJECT_INVALID', 'RESULT_TOO_LARGE']);

/** The fields of a command a result is signed for and published under. */
export type AnsweredCommand = Pick<AgentCommand, 'commandId' | 'kind' | 'nodeId' | 'siteId' | 'nonce'>;

/** Where and how an agent's results go: signed with its key, one subject per command and nonce, msgID = command id. */
export class ResultPublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly identity: AgentIdentity,
    private readonly agentId: string,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  sign(
    command: AnsweredCommand,
    outcome: { ok: true; payload: unknown } | { ok: false; errorCode: string; errorMessage: string; payload?: unknown },
  ): Uint8Array {
    const result: AgentResultData = {
      commandId: command.commandId,
      kind: command.kind,
      nodeId: command.nodeId,
      siteId: command.siteId,
      agentId: this.agentId,
      ok: outcome.ok,
      errorCode: outcome.ok ? '' : outcome.errorCode,
      errorMessage: outcome.ok ? '' : outcome.errorMessage,
      payload: outcome.payload ?? null,
      executedAtMs: Date.now(),
      commandNonce: command.nonce,
    };
    return signAgentResult(result, this.identity);
  }

  /**
   * Hands the result to the control plane's result intake, which stores it in BC_AGENT_RESULTS and answers with the
   * stream's PubAck (a re-publish of the same bytes is the duplicate it is), or refuses it with a `RESULT_*` code.
   */
  async publish(command: AnsweredCommand, bytes: Uint8Array): Promise<void> {
    try {
      await this.js.publish(Subjects.agentResult(command.siteId, command.nodeId, command.commandId, command.nonce), bytes, { msgID: command.commandId });
    } catch (err) {
      // A refusal that publishing the same bytes again cannot change: the command is answered (and journaled), so it
      // is acked rather than redelivered every few seconds. Anything else (no intake running, a command the intake has
      // not read yet) is thrown, and the redelivered command is answered again from the journal.
      const code = /^(RESULT_[A-Z_]+): /.exec(err instanceof Error ? err.message : '')?.[1];
      if (!code || !FINAL_REFUSALS.has(code)) throw err;
      this.log?.warn({ commandId: command.commandId, kind: command.kind, code, reason: (err as Error).message }, 'result refused by the control plane');
    }
  }

  /**
   * This agent's own result already stored for a command, if any: guards against re-running after a lost journal.
   * Only a result signed with this agent's key counts: anything else on the subject proves nothing about this agent.
   */
  async existing(command: AnsweredCommand): Promise<Uint8Array | undefined> {
    const msg = await this.jsm.direct.getMessage(Streams.agentResults.name, {
      last_by_subj: Subjects.acceptedAgentResult(command.siteId, command.nodeId, command.commandId, command.nonce),
    });
    if (!msg) return undefined;
    try {
      return decodeSignedResult(msg.data).keyId === this.identity.keyId ? msg.data : undefined;
    } catch {
      return undefined;
    }
  }
}
