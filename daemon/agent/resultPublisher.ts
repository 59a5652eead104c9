import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { decodeSignedResult, signAgentResult, type AgentResultData } from '../../schemas/agent/agentResultCodec.ts';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { AgentIdentity } from './identity.ts';

/** The fields of a command a result is signed for and published under. */
export type AnsweredCommand = Pick<AgentCommand, 'commandId' | 'kind' | 'nodeId' | 'siteId' | 'nonce'>;

/** Where and how an agent's results go: signed with its key, one subject per command and nonce, msgID = command id. */
export class ResultPublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly identity: AgentIdentity,
    private readonly agentId: string,
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

  /** Publishes into BC_AGENT_RESULTS; JetStream dedupes a re-publish of the same command's result. */
  async publish(command: AnsweredCommand, bytes: Uint8Array): Promise<void> {
    await this.js.publish(Subjects.agentResult(command.siteId, command.nodeId, command.commandId, command.nonce), bytes, { msgID: command.commandId });
  }

  /**
   * This agent's own result already stored for a command, if any: guards against re-running after a lost journal.
   * Only a result signed with this agent's key counts: anything else on the subject proves nothing about this agent.
   */
  async existing(command: AnsweredCommand): Promise<Uint8Array | undefined> {
    const msg = await this.jsm.direct.getMessage(Streams.agentResults.name, {
      last_by_subj: Subjects.agentResult(command.siteId, command.nodeId, command.commandId, command.nonce),
    });
    if (!msg) return undefined;
    try {
      return decodeSignedResult(msg.data).keyId === this.identity.keyId ? msg.data : undefined;
    } catch {
      return undefined;
    }
  }
}
