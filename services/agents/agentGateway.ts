import { AgentCommand, AgentCommandKinds, commandNonce, ramdiskOnlyKinds, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { exchangeAgentCommand, sendAgentCommand, storedResult, verifiedResult, type AgentExchangeDeps, type RejectedResult } from './agentExchange.ts';
import type { StepContext, StepPlatform } from '../../plugins/sdk/defineStep.ts';
import type { RefusalCount } from '../../schemas/refusals.ts';
import { RetryableError, TerminalError } from '../../plugins/sdk/stepErrors.ts';
import { checkProxyRequest } from './httpProxyPolicy.ts';
import { permanentAgentFailures } from '../../schemas/agent/permanentFailures.ts';
import { siteAggregate } from '../site/site/site.ts';
import { poolAggregate } from '../vps/pool/pool.ts';
import { HttpProxyAnswer, HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import type { StreamWatch } from './streamWatch.ts';
import type { SecretTicketClaims } from '../secrets/secretTicket.ts';
import { requireUncontestedBoot, waitForBootedRamdisk, type RamdiskBootWait } from './bootedRamdiskWait.ts';

/** A ramdisk or node agent that joined: what `wait.agentJoined` waits for. */
export interface AgentJoin {
  agentId: string;
  keyId: string;
  /** When the registration was recorded (event time, ms). */
  atMs: number;
  /** The join token that authorised the key (absent: the agent's own registration or rotation). */
  joinTokenId?: string;
  /** A key rotation of an agent already registered, not a new agent. */
  rotation: boolean;
}

export interface AgentGatewayDeps extends AgentExchangeDeps {
  /** Agent registrations, by `joinKey(site, node, role)`. */
  joins: StreamWatch<AgentJoin>;
  /** Receives each verified signed result, which the executor hands to `workflow.completeStep` as evidence. */
  onVerified: (bytes: Uint8Array) => void;
  /** Records a result that did not verify; the attempt keeps waiting for a valid one. */
  onRejected: (rejected: RejectedResult) => Promise<void>;
  /** Records how many more did not verify without a record of their own (one count per window). */
  onRejectedCount(commandId: string, count: RefusalCount): Promise<void>;
  /** The attempt's nonce (recorded by `workflow.startStep`): each command's nonce derives from it. */
  attemptNonce: string;
  /** The nonce was made for this run (`ClaimedAttempt.fresh`): a command's first exchange finds nothing stored. */
  freshAttempt?: boolean;
  /** The ramdisk this workflow booted (`bootedRamdiskOf`): the only agent ramdisk-only kinds are addressed to. */
  bootedRamdisk: string | undefined;
  /** The enqueue check: throws when this attempt may not send `kind` (undeclared, or outside an approved batch). */
  mayEnqueue(kind: AgentCommandKind): void;
  /** Present when the executor holds the master key: tickets the secret headers of a `site.httpProxy` command. */
  issueSecretTicket?(claims: SecretTicketClaims): string;
  /** Set for a `wait.agentJoined` of a ramdisk right after a reset: that boot, which the ramdisk must be of. */
  ramdiskBoot?: RamdiskBootWait;
  /** The boot of `bootedRamdisk` (`bootIdOf`): a contest of it fails every later command. */
  bootedRamdiskBootId?: string;
}

export const joinKey = (siteId: string, nodeId: string, role: string) => `${siteId}/${nodeId}/${role}`;

/** How long `wait.agentJoined` waits on the join watch before asking it to reopen its consumer. */
const JOIN_SLICE_MS = 20_000;

/** Talks to agents for one step attempt; the attempt's idempotency key is the agent command's id. */
export function agentGateway(
  deps: AgentGatewayDeps,
  ctx: Omit<StepContext<unknown>, 'platform' | 'input' | 'pki' | 'secrets' | 'blobs' | 'renderTemplate' | 'agentEndpoints'>,
): StepPlatform {
  const { node, workflow } = ctx;
  /** Polled `site.httpProxy` requests of this attempt, by key: how many were sent and the newest settled answer. */
  const polls = new Map<string, { sent: number; settled: HttpProxyAnswer | null }>();
  /** Command ids this gateway exchanged: only a first exchange of a fresh attempt's command skips the stored-result read. */
  const exchanged = new Set<string>();

  const commandFor = (kind: AgentCommandKind, params: Record<string, unknown>, destructive: boolean, commandId: string) => {
    deps.mayEnqueue(kind);
    const addressee = ramdiskOnlyKinds.has(kind) ? deps.bootedRamdisk : undefined;
    if (ramdiskOnlyKinds.has(kind) && !addressee) {
      throw new TerminalError('PRECONDITION_FAILED', `${kind} is answered only by the ramdisk this workflow booted, and none joined before this step`);
    }
    const notAfter = new Date(ctx.deadlineMs).toISOString();
    const refs = kind === 'site.httpProxy' ? Object.values((params.secretHeaders ?? {}) as Record<string, string>) : [];
    if (refs.length > 0) {
      if (!deps.issueSecretTicket) throw new TerminalError('PRECONDITION_FAILED', 'secret headers need an executor that holds the master key');
      params = { ...params, secretTicket: deps.issueSecretTicket({ commandId, nodeId: node.nodeId, refs, notAfter }) };
    }
    return AgentCommand.parse({
      commandId,
      kind,
      siteId: node.siteId,
      nodeId: node.nodeId,
      workflowId: workflow.workflowId,
      stepIndex: workflow.stepIndex,
      attempt: workflow.attempt,
      destructive,
      params,
      ...(AgentCommandKinds[kind].runsOn === 'site' ? { bmc: node.bmc } : {}),
      issuedAt: new Date().toISOString(),
      notAfter,
      nonce: commandNonce(deps.attemptNonce, commandId),
      ...(addressee ? { agentId: addressee } : {}),
    });
  };

  return {
    async runAgentCommand(kind, params, destructive) {
      const command = commandFor(kind as AgentCommandKind, params, destructive, ctx.idempotencyKey);
      const bootId = deps.bootedRamdiskBootId;
      // Before sending: a copy of the boot's record the log confirmed within 1 s will do; before the result counts, a read.
      if (bootId) await requireUncontestedBoot(deps.repository, bootId, node.nodeId, 'seen');
      const neverSent = deps.freshAttempt === true && !exchanged.has(command.commandId);
      exchanged.add(command.commandId);
      const result = await exchangeAgentCommand(deps, command, {
        deadlineMs: ctx.deadlineMs,
        signal: ctx.signal,
        onVerified: deps.onVerified,
        onRejected: deps.onRejected,
        onRejectedCount: (count) => deps.onRejectedCount(command.commandId, count),
        neverSent,
      });
      if (bootId) await requireUncontestedBoot(deps.repository, bootId, node.nodeId, 'read');
      if (!result.ok) {
        const failure = `${kind} failed on ${result.agentId}: ${result.errorCode} ${result.errorMessage}`;
        // The same BMC gives the same answer: no attempt or backoff is spent on it.
        if (permanentAgentFailures.has(result.errorCode)) throw new TerminalError('AGENT_FAILED', failure);
        throw new RetryableError('AGENT_FAILED', failure);
      }
      return { payload: result.payload, agentId: result.agentId };
    },

    async httpViaSite(input) {
      const parsed = HttpProxyRequest.safeParse(input);
      if (!parsed.success) throw new TerminalError('VALIDATION_FAILED', `site.httpProxy request is invalid: ${parsed.error.message}`);
      const request = parsed.data;
      checkProxyRequest(request, { addresses: node.addresses, provisioningCidrs: await provisioningCidrsOf(deps, node) });
      if (!request.poll) return HttpProxyAnswer.parse((await this.runAgentCommand('site.httpProxy', request, true)).payload);
      // Polling: answer with the newest settled answer under this key and send the next request, never two at once.
      const key = request.key ?? 'poll';
      const idOf = (n: number) => `${ctx.idempotencyKey}-${key}-${n}`;
      const isStored = async (n: number) => (await storedResult(deps, commandFor('site.httpProxy', request, true, idOf(n)))) !== undefined;
      // A rerun after stepNotReady gets a fresh gateway: earlier runs of this attempt got as far as the log shows.
      const poll = polls.get(key) ?? { sent: await settledPolls(isStored), settled: null };
      polls.set(key, poll);
      if (poll.sent > 0) {
        const last = commandFor('site.httpProxy', request, true, idOf(poll.sent));
        const stored = await storedResult(deps, last);
        if (!stored) return poll.settled;
        const result = await verifiedResult(deps, last, stored.data);
        // A failed request (the machine not listening yet) settles as "no answer": polling is for waiting on it.
        poll.settled = result.ok ? HttpProxyAnswer.parse(result.payload) : null;
        if (!result.ok) ctx.log.info({ key, code: result.errorCode, message: result.errorMessage }, 'polled request failed');
      }
      poll.sent += 1;
      await sendAgentCommand(deps, commandFor('site.httpProxy', request, true, idOf(poll.sent)));
      return poll.settled;
    },

    async waitForAgent(role, sinceIso) {
      if (role === 'ramdisk' && deps.ramdiskBoot) return waitForBootedRamdisk(deps, ctx, deps.ramdiskBoot, joinKey(node.siteId, node.nodeId, role));
      const since = Date.parse(sinceIso);
      const key = joinKey(node.siteId, node.nodeId, role);
      for (;;) {
        const left = ctx.deadlineMs - Date.now();
        if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `${role} agent of ${node.nodeId} did not join before the step timeout`, { retryAfterMs: 0 });
        const join = await deps.joins.next(key, (j) => j.atMs >= since, Math.min(left, JOIN_SLICE_MS), ctx.signal);
        if (join) return { agentId: join.agentId, keyId: join.keyId };
        // Long without news: the join may be stored already while the watch's consumer stalled silently.
        deps.joins.reopen();
      }
    },
  };
}

/** The networks plain http may reach for this node: its site's provisioning CIDRs, and its metal pool's. */
async function provisioningCidrsOf(deps: AgentGatewayDeps, node: { siteId: string; poolId: string | null }): Promise<string[]> {
  const site = (await deps.repository.load(siteAggregate, node.siteId)).state;
  const pool = node.poolId === null ? undefined : (await deps.repository.load(poolAggregate, node.poolId)).state;
  // The proxy policy matches IPv4 hosts only; a pool's IPv6 networks have nothing to match.
  return [...(site.exists ? site.provisioningCidrs : []), ...(pool?.exists ? pool.policy.provisioningCidrs.filter((cidr) => !cidr.includes(':')) : [])];
}

/**
 * How many polled requests of an attempt have settled, read from the stored results: request n+1 is sent only after
 * n settled, so the stored ones are 1..k. Found in O(log k) direct gets (doubling, then halving).
 */
export async function settledPolls(isStored: (n: number) => Promise<boolean>): Promise<number> {
  if (!(await isStored(1))) return 0;
  let low = 1;
  let high = 2;
  while (await isStored(high)) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await isStored(mid)) low = mid;
    else high = mid;
  }
  return low;
}
