import type { JoinAttestorName } from '../../schemas/trust/joinTokens.ts';
import { deployDriverOf } from '../../schemas/metal/nodeState.ts';
import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentEndpoints, StepContext, StepDefinition } from '../../plugins/sdk/defineStep.ts';
import { agentGateway, type AgentJoin } from '../agents/agentGateway.ts';
import type { AgentLiveness } from '../agents/agentLiveness.ts';
import type { StreamWatch } from '../agents/streamWatch.ts';
import type { BlobStore } from '../blobs/blobStore.ts';
import type { NodeAggregateState } from '../metal/node/node.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { Logger } from '../platform/logger.ts';
import type { MasterKey } from '../secrets/masterKey.ts';
import { issueSecretTicket, type SecretTicketClaims } from '../secrets/secretTicket.ts';
import type { CommandSender } from '../trust/joinToken/mint.ts';
import type { ClaimedAttempt, StepCommandSender } from './attemptClaim.ts';
import { enqueuePolicy } from './enqueuePolicy.ts';
import { stepFacilities } from './stepFacilities.ts';
import { bootedRamdiskOf } from './workflow/attestation.ts';
import type { ExistingWorkflow } from '../../schemas/metal/workflowState.ts';
import { bootIdOf, supersededBootIdsOf } from '../../schemas/trust/ramdiskBoot.ts';
import type { RamdiskBootWait } from '../agents/bootedRamdiskWait.ts';

/** What every attempt of an executor process shares: its connection, watches, caches and keys. */
export interface StepContextDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  repository: AggregateRepository;
  watches: { results: StreamWatch<StoredMsg>; joins: StreamWatch<AgentJoin> };
  liveness: AgentLiveness | undefined;
  recheckMs: number;
  /** How long a machine has from its reset to fetch its ramdisk's boot script (`BC_RAMDISK_BOOT_BUDGET_MS`). */
  ramdiskBootBudgetMs: number;
  log: Logger;
  /** Runs `pki.createJoinToken` in-process for `ctx.pki`, and `pki.contestBoot` for a ramdisk wait. */
  mint: CommandSender;
  /** How the join tokens its steps mint are attested (`provisioned` for a plugin's steps). */
  mintsAs: JoinAttestorName;
  blobs: () => Promise<BlobStore>;
  masterKey: MasterKey | undefined;
  agentEndpoints: AgentEndpoints | undefined;
}

/** One claimed attempt, about to run on its node. */
export interface AttemptToRun {
  claim: ClaimedAttempt;
  stepIndex: number;
  definition: StepDefinition<string, any, any>;
  node: Extract<NodeAggregateState, { exists: true }>;
  deadlineMs: number;
  signal: AbortSignal;
  /** Tells JetStream the work message is still being worked on. */
  heartbeat: () => void;
  /** The attempt's engine commands (`workflow.rejectResult` and `countRejectedResults` for refused agent results). */
  send: StepCommandSender;
}

/**
 * The context a step's `run` gets (all but its validated `input`): the node and workflow it runs for, the attempt's
 * idempotency key and deadline, the facilities (join tokens, secrets, blobs, templates) and the agent gateway. The
 * verified signed result the gateway hands back is kept as the attempt's evidence for `workflow.completeStep`.
 */
export function buildStepContext(
  deps: StepContextDeps,
  run: AttemptToRun,
): { context: Omit<StepContext<unknown>, 'input'>; evidence: () => string | undefined } {
  const { claim, stepIndex, node, definition } = run;
  const { wf, attempt, attemptId } = claim;
  const { workflowId } = wf;
  const step = wf.steps[stepIndex]!;
  const base = {
    node: {
      nodeId: node.nodeId,
      siteId: node.siteId,
      bmc: node.bmc,
      macs: node.macs,
      addresses: node.addresses ?? [],
      productUuid: node.inventory?.productUuid ?? null,
      poolId: node.poolId ?? null,
      hardwareProfile: node.hardwareProfile,
      deployDriver: deployDriverOf(node),
    },
    workflow: { workflowId, operation: wf.operation, stepIndex, attempt, startedAt: wf.startedAt, restartedAt: wf.restartedAt ?? null },
    idempotencyKey: attemptId,
    deadlineMs: run.deadlineMs,
    heartbeat: run.heartbeat,
    signal: run.signal,
    log: deps.log.child({ workflowId, nodeId: node.nodeId, step: step.id, stepIndex, attempt, correlationId: attemptId }),
    ...stepFacilities(deps.mint, deps.blobs, node, deps.mintsAs),
    // Without configuration, agents are assumed to reach the server this executor uses.
    agentEndpoints: deps.agentEndpoints ?? { natsUrl: `nats://${deps.nc.getServer()}` },
  };
  let evidence: string | undefined;
  const ids = { workflowId, stepIndex, attempt };
  const platform = agentGateway(
    {
      js: deps.js,
      jsm: deps.jsm,
      repository: deps.repository,
      ...deps.watches,
      recheckMs: deps.recheckMs,
      ...(deps.liveness ? { liveness: deps.liveness } : {}),
      onVerified: (bytes) => (evidence = Buffer.from(bytes).toString('base64')),
      onRejected: async ({ commandId, reason, seq, agentId }) => {
        deps.log.warn({ workflowId, step: step.id, attempt, commandId, reason, agentId }, 'agent result refused; still waiting for a valid one');
        await run.send(
          'workflow.rejectResult',
          { ...ids, commandId, reason, ...(agentId ? { agentId: agentId.slice(0, 200) } : {}) },
          `${attemptId}-rej${seq}`,
        );
      },
      onRejectedCount: async (commandId, count) => {
        deps.log.warn({ workflowId, step: step.id, attempt, commandId, refused: count.refused, sources: count.sources.slice(0, 5) }, 'agent results refused');
        const span = `${Date.parse(count.from).toString(36)}-${Date.parse(count.to).toString(36)}`;
        await run.send('workflow.countRejectedResults', { ...ids, commandId, ...count }, `${attemptId}-rejc-${span}`);
      },
      // The start recorded a nonce (the claim refuses to run an attempt without one).
      attemptNonce: claim.nonce!,
      freshAttempt: claim.fresh,
      bootedRamdisk: bootedRamdiskOf(wf, stepIndex),
      ...ramdiskBootWaitOf(deps, wf, stepIndex, node),
      ...bootedRamdiskBootOf(wf, stepIndex),
      ...(deps.masterKey ? { issueSecretTicket: (claims: SecretTicketClaims) => issueSecretTicket(deps.masterKey!, claims) } : {}),
      mayEnqueue: enqueuePolicy(definition, wf, stepIndex),
    },
    base,
  );
  return { context: { ...base, platform }, evidence: () => evidence };
}

/** A ramdisk `wait.agentJoined` belongs to the boot of the site step (the reset) right before it: that step's attempt. */
function ramdiskBootWaitOf(deps: StepContextDeps, wf: ExistingWorkflow, stepIndex: number, node: { siteId: string; nodeId: string }) {
  const step = wf.steps[stepIndex];
  if (step?.id !== 'wait.agentJoined' || ((step.params as { role?: unknown }).role ?? 'ramdisk') !== 'ramdisk') return {};
  const reset = wf.progress[stepIndex - 1];
  if (wf.steps[stepIndex - 1]?.runsOn !== 'site' || !reset?.attemptStartedAt) return {};
  const { workflowId } = wf;
  const resetAttempt = { workflowId, stepIndex: stepIndex - 1, attempt: reset.attempt };
  const bootId = bootIdOf(resetAttempt);
  const ramdiskBoot: RamdiskBootWait = {
    bootId,
    resetAtMs: Date.parse(reset.attemptStartedAt),
    budgetMs: deps.ramdiskBootBudgetMs,
    contest: async (reason, detail) => {
      const payload = { bootId, workflowId, siteId: node.siteId, nodeId: node.nodeId, reason, detail };
      deps.log.warn({ workflowId, nodeId: node.nodeId, bootId, reason, code: 'BOOT_CONTESTED' }, 'ramdisk boot contested');
      await deps.mint('pki.contestBoot', payload, `contest-join-${bootId}`);
    },
    superseded: supersededBootIdsOf(resetAttempt),
    ignored: ({ agentId, joinTokenId, supersededBootId }) =>
      deps.log.warn(
        { workflowId, nodeId: node.nodeId, bootId, agentId, joinTokenId, supersededBootId },
        'ramdisk of a superseded boot registered late; ignored, still waiting for this boot',
      ),
  };
  return { ramdiskBoot };
}

/** The boot of the ramdisk this workflow booted before `stepIndex`: the reset attempt before its succeeded wait. */
function bootedRamdiskBootOf(wf: ExistingWorkflow, stepIndex: number): { bootedRamdiskBootId?: string } {
  for (let i = stepIndex - 1; i > 0; i--) {
    const step = wf.steps[i]!;
    if (step.id !== 'wait.agentJoined' || wf.progress[i]?.status !== 'succeeded') continue;
    if (((step.params as { role?: unknown }).role ?? 'ramdisk') !== 'ramdisk' || wf.steps[i - 1]?.runsOn !== 'site') return {};
    return { bootedRamdiskBootId: bootIdOf({ workflowId: wf.workflowId, stepIndex: i - 1, attempt: wf.progress[i - 1]!.attempt }) };
  }
  return {};
}
