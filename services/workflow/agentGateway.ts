import { setTimeout as sleep } from 'node:timers/promises';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { AgentCommand, AgentCommandKinds, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { EventBatch } from '../../schemas/envelope.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { AggregateRepository } from '../commands/aggregateRepository.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
import type { StepContext, StepPlatform } from './defineStep.ts';
import { ResultRejectedError, RetryableError } from './stepErrors.ts';

export interface AgentGatewayDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  repository: AggregateRepository;
  /** How often a waiting step looks for its result (and heartbeats). */
  pollMs: number;
  /** Receives each verified signed result, which the executor hands to `workflow.completeStep` as evidence. */
  onVerified(bytes: Uint8Array): void;
}

/**
 * Talks to agents for one step attempt. The command id is the attempt's idempotency key and the JetStream message id,
 * so however often the attempt is redelivered, the agent's stream holds the command once; a result already stored
 * is used without publishing at all.
 */
export function agentGateway(deps: AgentGatewayDeps, ctx: Omit<StepContext<unknown>, 'platform' | 'input'>): StepPlatform {
  const { node, workflow } = ctx;

  const untilDeadline = async <T>(what: string, poll: () => Promise<T | undefined>): Promise<T> => {
    for (;;) {
      ctx.signal.throwIfAborted();
      const found = await poll();
      if (found !== undefined) return found;
      if (Date.now() >= ctx.deadlineMs) throw new RetryableError('STEP_TIMEOUT', `${what} did not happen before the step timeout`, { retryAfterMs: 0 });
      ctx.heartbeat();
      await sleep(deps.pollMs, undefined, { signal: ctx.signal });
    }
  };

  return {
    async runAgentCommand(kind, params, destructive) {
      const runsOn = AgentCommandKinds[kind as AgentCommandKind].runsOn;
      const commandId = ctx.idempotencyKey;
      const command = AgentCommand.parse({
        commandId,
        kind,
        siteId: node.siteId,
        nodeId: node.nodeId,
        workflowId: workflow.workflowId,
        stepIndex: workflow.stepIndex,
        attempt: workflow.attempt,
        destructive,
        params,
        ...(runsOn === 'site' ? { bmc: node.bmc } : {}),
        issuedAt: new Date().toISOString(),
        notAfter: new Date(ctx.deadlineMs).toISOString(),
      });
      const resultSubject = Subjects.agentResult(node.siteId, node.nodeId, commandId);
      const lastResult = () => deps.jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: resultSubject }).catch(() => null);
      if (!(await lastResult())) {
        const subject = runsOn === 'site' ? Subjects.siteAgentCommands(node.siteId, node.nodeId) : Subjects.nodeAgentCommands(node.siteId, node.nodeId);
        await deps.js.publish(subject, JSON.stringify(command), { msgID: commandId });
      }
      const stored = await untilDeadline(`result of ${commandId}`, async () => (await lastResult()) ?? undefined);
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
      deps.onVerified(bytes);
      if (!verdict.result.ok) {
        throw new RetryableError('AGENT_FAILED', `${kind} failed on ${verdict.result.agentId}: ${verdict.result.errorCode} ${verdict.result.errorMessage}`);
      }
      return { payload: verdict.result.payload, agentId: verdict.result.agentId };
    },

    async waitForAgent(role, sinceIso) {
      const consumer = await deps.js.consumers.get(Streams.events.name, {
        filter_subjects: Subjects.moduleEvents('trust'),
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: sinceIso,
      });
      return untilDeadline(`${role} agent of ${node.nodeId} joining`, async () => {
        for (;;) {
          const msg = await consumer.next({ expires: Math.max(1_000, deps.pollMs) });
          if (!msg) return undefined;
          for (const e of EventBatch.parse(msg.json()).events) {
            const d = e.data as { agentId: string; role: string; nodeId: string | null; siteId: string; keyId: string };
            if ((e.type === 'AgentRegistered' || e.type === 'AgentKeyRotated') && d.role === role && d.nodeId === node.nodeId && d.siteId === node.siteId) {
              return { agentId: d.agentId, keyId: d.keyId };
            }
          }
        }
      });
    },
  };
}
