import { AgentCommand, AgentCommandKinds, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { exchangeAgentCommand, type AgentExchangeDeps } from './agentExchange.ts';
import type { StepContext, StepPlatform } from './defineStep.ts';
import { RetryableError, TerminalError } from './stepErrors.ts';
import { checkProxyRequest } from './httpProxyPolicy.ts';
import { siteAggregate } from '../site/site/site.ts';
import { HttpProxyAnswer, HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import type { StreamWatch } from './streamWatch.ts';

/** A ramdisk or node agent that joined: what `wait.agentJoined` waits for. */
export interface AgentJoin {
  agentId: string;
  keyId: string;
  /** When the registration was recorded (event time, ms). */
  atMs: number;
}

export interface AgentGatewayDeps extends AgentExchangeDeps {
  /** Agent registrations, by `joinKey(site, node, role)`. */
  joins: StreamWatch<AgentJoin>;
  /** Receives each verified signed result, which the executor hands to `workflow.completeStep` as evidence. */
  onVerified(bytes: Uint8Array): void;
  /** The enqueue check: throws when this attempt may not send `kind` (undeclared, or outside an approved batch). */
  mayEnqueue(kind: AgentCommandKind): void;
}

export const joinKey = (siteId: string, nodeId: string, role: string) => `${siteId}/${nodeId}/${role}`;

/** Talks to agents for one step attempt; the attempt's idempotency key is the agent command's id. */
export function agentGateway(deps: AgentGatewayDeps, ctx: Omit<StepContext<unknown>, 'platform' | 'input'>): StepPlatform {
  const { node, workflow } = ctx;

  return {
    async runAgentCommand(kind, params, destructive) {
      deps.mayEnqueue(kind as AgentCommandKind);
      const runsOn = AgentCommandKinds[kind as AgentCommandKind].runsOn;
      const command = AgentCommand.parse({
        commandId: ctx.idempotencyKey,
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
      const result = await exchangeAgentCommand(deps, command, { deadlineMs: ctx.deadlineMs, signal: ctx.signal, onVerified: deps.onVerified });
      if (!result.ok) throw new RetryableError('AGENT_FAILED', `${kind} failed on ${result.agentId}: ${result.errorCode} ${result.errorMessage}`);
      return { payload: result.payload, agentId: result.agentId };
    },

    async httpViaSite(input) {
      const parsed = HttpProxyRequest.safeParse(input);
      if (!parsed.success) throw new TerminalError('VALIDATION_FAILED', `site.httpProxy request is invalid: ${parsed.error.message}`);
      const site = (await deps.repository.load(siteAggregate, node.siteId)).state;
      checkProxyRequest(parsed.data, { addresses: node.addresses, provisioningCidrs: site.exists ? site.provisioningCidrs : [] });
      const { payload } = await this.runAgentCommand('site.httpProxy', parsed.data, true);
      return HttpProxyAnswer.parse(payload);
    },

    async waitForAgent(role, sinceIso) {
      const since = Date.parse(sinceIso);
      const key = joinKey(node.siteId, node.nodeId, role);
      for (;;) {
        const left = ctx.deadlineMs - Date.now();
        if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `${role} agent of ${node.nodeId} did not join before the step timeout`, { retryAfterMs: 0 });
        const join = await deps.joins.next(key, (j) => j.atMs >= since, left, ctx.signal);
        if (join) return { agentId: join.agentId, keyId: join.keyId };
      }
    },
  };
}
