import { setMaxListeners } from 'node:events';
import { AckPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { newNonce } from '../../schemas/agent/agentCommand.ts';
import { stepAttemptId, WorkMessage } from '../../schemas/metal/workflow.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { CommandBus } from '../platform/commands/commandBus.ts';
import { createJoinToken } from '../trust/joinToken/create.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { isTransportFailure } from '../platform/nats/transportFailure.ts';
import type { MasterKey } from '../secrets/masterKey.ts';
import { issueSecretTicket, type SecretTicketClaims } from '../secrets/secretTicket.ts';
import { nodeAggregate } from '../metal/node/node.ts';
import { approvalStatus, workflowAggregate } from './workflow/workflow.ts';
import { bootedRamdiskOf } from './workflow/attestation.ts';
import { agentGateway, type AgentJoin } from '../agents/agentGateway.ts';
import { startAgentLiveness, type AgentLiveness } from '../agents/agentLiveness.ts';
import { startAgentWatches } from '../agents/agentWatches.ts';
import type { StreamWatch } from '../agents/streamWatch.ts';
import { BlobStore } from '../blobs/blobStore.ts';
import { builtinSteps } from '../plugins/builtinSteps.ts';
import { bindStepOutputs } from './stepOutputs.ts';
import { stepFacilities } from './stepFacilities.ts';
import type { AgentEndpoints, StepDefinition } from '../../plugins/sdk/defineStep.ts';
import { enqueuePolicy } from './enqueuePolicy.ts';
import { sendEngineCommand } from './commandSender.ts';
import type { WorkflowConfig } from './config.ts';
import { ResultRejectedError, RetryableError, StepNotReadyError, TerminalError } from '../../plugins/sdk/stepErrors.ts';

export const EXECUTOR_DURABLE = 'workflow_executor';
/** How often a destructive step waiting for its approval batch looks again. */
const APPROVAL_RECHECK_MS = 3_000;

/**
 * `workflow-executor`: any number of processes share one durable consumer on `bc.work.control-plane.>`. Each work
 * message is one step attempt; its outcome is recorded on the workflow before the message is acked (`ack`),
 * retried (`nak(delay)`) or given up (`term`). A stopped executor leaves its messages unacked: they come back after
 * the ack wait and resume the same attempt (same agent command id, so the agent never sees it twice).
 */
export class WorkflowExecutor {
  readonly #repository: AggregateRepository;
  /** Runs the join-token commands steps mint (`ctx.pki`): they are never served over NATS. */
  readonly #joinTokens: CommandBus;
  readonly #abort = new AbortController();
  #messages: ConsumerMessages | undefined;
  /** Made once: `js.jetstreamManager()` costs an account-info request each time it is called. */
  #jsm: JetStreamManager | undefined;
  #blobs: Promise<BlobStore> | undefined;
  #watches: { results: StreamWatch<StoredMsg>; joins: StreamWatch<AgentJoin> } | undefined;
  #liveness: AgentLiveness | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly store: EventStore,
    private readonly config: WorkflowConfig,
    private readonly log: Logger,
    private readonly options: {
      /** Signs the tickets that let a site agent be granted a `site.httpProxy` command's secret headers. */
      masterKey?: MasterKey;
      /** The steps this executor runs, by id. Default: the built-in ones. */
      steps?: ReadonlyMap<string, StepDefinition<string, any, any>>;
      /** Whose work it takes: default the platform's (`bc.work.control-plane.>`); a plugin's replicas share `plugin_<id>`. */
      work?: { durable: string; filterSubject: string };
      /** Where machines fetch step artefacts (`ctx.blobs` URLs): the API's public address. */
      blobBaseUrl?: string;
      /** How machines' agents reach the platform (`ctx.agentEndpoints`). */
      agentEndpoints?: AgentEndpoints;
    } = {},
  ) {
    this.#repository = new AggregateRepository(store);
    this.#joinTokens = new CommandBus(store, [createJoinToken], { retries: 5 });
    // Every running attempt waits on this one signal: hundreds of listeners are the design, not a leak.
    setMaxListeners(0, this.#abort.signal);
  }

  async start(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    this.#jsm = jsm;
    const { durable, filterSubject } = this.options.work ?? { durable: EXECUTOR_DURABLE, filterSubject: Subjects.work('control-plane', '>') };
    const existing = await jsm.consumers.info(Streams.work.name, durable).catch(() => undefined);
    const config = { ack_wait: this.config.workAckWaitMs * 1_000_000, max_ack_pending: 10_000 };
    if (!existing) {
      await jsm.consumers
        .add(Streams.work.name, { durable_name: durable, filter_subject: filterSubject, ack_policy: AckPolicy.Explicit, ...config })
        // Two replicas starting together both try to create it; the loser uses the winner's.
        .catch(async (err: unknown) => {
          if (!(await jsm.consumers.info(Streams.work.name, durable).catch(() => undefined))) throw err;
        });
    } else if (existing.config.ack_wait !== config.ack_wait) {
      await jsm.consumers.update(Streams.work.name, durable, config);
    }
    this.#watches = await startAgentWatches(this.nc, this.store, this.log);
    this.#liveness = startAgentLiveness(this.nc, { repository: this.#repository, timeoutMs: this.config.agentHeartbeatTimeoutMs, log: this.log });
    const consumer = await jetstream(this.nc).consumers.get(Streams.work.name, durable);
    this.#messages = await consumer.consume({
      max_messages: this.config.executorConcurrency,
      callback: (msg) => void this.handle(msg),
    });
  }

  /** Opened on first use: most steps never store an artefact. */
  private blobs(): Promise<BlobStore> {
    this.#blobs ??= BlobStore.open(this.nc, this.options.blobBaseUrl ?? 'http://127.0.0.1:8080');
    return this.#blobs;
  }

  /** Stops taking work and abandons running attempts without acking them, as a crash would. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#messages?.close().catch(() => undefined);
    await Promise.all([this.#watches?.results.stop(), this.#watches?.joins.stop(), this.#liveness?.stop()]);
  }

  private async handle(msg: JsMsg): Promise<void> {
    const signal = this.#abort.signal;
    const heartbeat = setInterval(() => msg.working(), Math.max(250, Math.floor(this.config.workAckWaitMs / 3)));
    try {
      await this.runAttempt(msg, signal);
    } catch (err) {
      if (signal.aborted) return;
      // Infrastructure trouble before an outcome was recorded: try the same attempt again shortly.
      const level = isTransportFailure(err) ? 'warn' : 'error';
      this.log[level]({ err, subject: msg.subject }, 'step work failed before recording an outcome; resuming it shortly');
      msg.nak(1_000);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async runAttempt(msg: JsMsg, signal: AbortSignal): Promise<void> {
    const parsed = WorkMessage.safeParse(jsonOrUndefined(msg));
    if (!parsed.success) return msg.term('malformed work message');
    const { workflowId, stepIndex } = parsed.data;
    const wf = (await this.#repository.load(workflowAggregate, workflowId)).state;
    const progress = wf.exists ? wf.progress[stepIndex] : undefined;
    // Already decided (a duplicate or a stale redelivery): nothing left to do for this message.
    if (!wf.exists || wf.status !== 'running' || !progress || progress.status === 'succeeded' || progress.status === 'pending') return msg.ack();
    const step = wf.steps[stepIndex]!;
    // Quorum: a destructive step waits, unstarted, until its batch collected its signatures.
    const approval = approvalStatus(wf, stepIndex, Date.now());
    if (approval === 'pending') return msg.nak(APPROVAL_RECHECK_MS);
    // A running attempt is resumed as itself; a scheduled step (first run, or again after a restart from its boot) or a
    // failed one (retryable, else the workflow would be over) gets the next number.
    const attempt = progress.status === 'running' ? progress.attempt : progress.attempt + 1;
    const attemptId = stepAttemptId(workflowId, stepIndex, attempt);
    const send = (name: string, payload: unknown, suffix: string) => sendEngineCommand(this.nc, this.log, signal, name, payload, `${attemptId}-${suffix}`);
    const ids = { workflowId, stepIndex, attempt };
    const started = await send('workflow.startStep', { ...ids, nonce: newNonce() }, 'go');
    if (!started) return msg.ack();
    // A resumed attempt keeps the deadline and the nonce it started with, however often the server or the executor went away.
    const startedEvent = started.events.find((e) => e.type === 'StepStarted')?.data as { startedAt?: string; nonce?: string } | undefined;
    const startedAt = startedEvent?.startedAt ?? (progress.status === 'running' ? progress.attemptStartedAt : null);
    const attemptNonce = startedEvent?.nonce ?? (progress.status === 'running' ? progress.nonce : null);
    const deadlineMs = (startedAt ? Date.parse(startedAt) : Date.now()) + step.timeoutMs;

    const definition = (this.options.steps ?? builtinSteps).get(step.id);
    const node = (await this.#repository.load(nodeAggregate, wf.nodeId)).state;
    let outcome: { ok: true; output: unknown } | { ok: false; error: unknown };
    let evidence: string | undefined;
    try {
      if (!definition) throw new TerminalError('PRECONDITION_FAILED', `no step implementation "${step.id}"`);
      if (!node.exists) throw new TerminalError('NOT_FOUND', `node ${wf.nodeId} does not exist`);
      if (approval === 'expired')
        throw new TerminalError(
          'APPROVAL_EXPIRED',
          `the approval batch expired at ${wf.approval!.expiresAt} before reaching ${wf.approval!.threshold} signatures`,
        );
      // An attempt started before attempts had nonces cannot bind its commands' results: the next attempt will.
      if (!attemptNonce)
        throw new RetryableError('PRECONDITION_FAILED', `attempt ${attempt} started without a nonce; retrying as a new attempt`, { retryAfterMs: 0 });
      const input = definition.input.safeParse(bindStepOutputs(step.params, wf, stepIndex));
      if (!input.success) throw new TerminalError('VALIDATION_FAILED', `step ${step.id} params are invalid: ${input.error.message}`);
      const base = {
        node: {
          nodeId: node.nodeId,
          siteId: node.siteId,
          bmc: node.bmc,
          macs: node.macs,
          addresses: node.addresses ?? [],
          productUuid: node.inventory?.productUuid ?? null,
          poolId: node.poolId ?? null,
        },
        workflow: { workflowId, operation: wf.operation, stepIndex, attempt, startedAt: wf.startedAt, restartedAt: wf.restartedAt ?? null },
        idempotencyKey: attemptId,
        deadlineMs,
        heartbeat: () => msg.working(),
        signal,
        log: this.log.child({ workflowId, nodeId: node.nodeId, step: step.id, stepIndex, attempt, correlationId: attemptId }),
        ...stepFacilities(
          (name, payload, commandId) => this.#joinTokens.execute({ name, payload, commandId, causationId: attemptId, actor: 'workflow-executor' }),
          () => this.blobs(),
          node,
        ),
        // Without configuration, agents are assumed to reach the server this executor uses.
        agentEndpoints: this.options.agentEndpoints ?? { natsUrl: `nats://${this.nc.getServer()}` },
      };
      const js = jetstream(this.nc);
      const onVerified = (bytes: Uint8Array) => (evidence = Buffer.from(bytes).toString('base64'));
      const platform = agentGateway(
        {
          js,
          jsm: this.#jsm!,
          repository: this.#repository,
          ...this.#watches!,
          recheckMs: this.config.resultRecheckMs,
          ...(this.#liveness ? { liveness: this.#liveness } : {}),
          onVerified,
          onRejected: async ({ commandId, reason, seq, agentId }) => {
            this.log.warn({ workflowId, step: step.id, attempt, commandId, reason, agentId }, 'agent result refused; still waiting for a valid one');
            await send('workflow.rejectResult', { ...ids, commandId, reason, ...(agentId ? { agentId: agentId.slice(0, 200) } : {}) }, `rej${seq}`);
          },
          attemptNonce,
          bootedRamdisk: bootedRamdiskOf(wf, stepIndex),
          ...(this.options.masterKey ? { issueSecretTicket: (claims: SecretTicketClaims) => issueSecretTicket(this.options.masterKey!, claims) } : {}),
          mayEnqueue: enqueuePolicy(definition, wf, stepIndex),
        },
        base,
      );
      const output = await definition.run({ ...base, input: input.data, platform });
      const checked = definition.output ? definition.output.safeParse(output) : { success: true as const, data: output };
      if (!checked.success)
        throw new TerminalError('VALIDATION_FAILED', `step ${step.id} returned an output that does not match its schema: ${checked.error.message}`);
      outcome = { ok: true, output: checked.data };
    } catch (error) {
      // The server went away mid-step: not the step's failure. The same attempt resumes (same command id) on redelivery.
      if (signal.aborted || isTransportFailure(error)) throw error;
      if (error instanceof StepNotReadyError && Date.now() < deadlineMs) {
        this.log.debug({ workflowId, step: step.id, attempt, reason: error.reason }, 'step not ready; running it again later');
        return msg.nak(Math.min(error.retryAfterMs, Math.max(100, deadlineMs - Date.now())));
      }
      outcome = {
        ok: false,
        error: error instanceof StepNotReadyError ? new RetryableError('STEP_TIMEOUT', `still not ready at the step timeout: ${error.reason}`) : error,
      };
    }

    if (outcome.ok) {
      await send('workflow.completeStep', { ...ids, output: outcome.output ?? null, ...(evidence ? { signedResult: evidence } : {}) }, 'ok');
      return msg.ack();
    }
    const err = outcome.error;
    const rejected = err instanceof ResultRejectedError;
    // A refused result for a destructive command is never retried: nothing proves what the machine did.
    const retryable = rejected ? !step.destructive : !(err instanceof TerminalError);
    const code = err instanceof TerminalError || err instanceof RetryableError || rejected ? err.code : 'INTERNAL';
    const message = err instanceof Error ? err.message : String(err);
    this.log.warn({ workflowId, step: step.id, attempt, code, message, retryable }, 'step attempt failed');
    const result = await send(
      'workflow.failStep',
      { ...ids, code, message: message.slice(0, 1000), retryable, ...(rejected ? { rejected: { commandId: err.commandId, reason: err.reason } } : {}) },
      'fail',
    );
    const workflowOver = !result || result.events.some((e) => e.type === 'WorkflowFailed' || e.type === 'WorkflowCancelled');
    if (workflowOver) return msg.term();
    // Restarted from the boot: this step runs again only once the boot is done, as new work.
    if (result.events.some((e) => e.type === 'WorkflowRewound')) return msg.ack();
    msg.nak(err instanceof RetryableError && err.retryAfterMs !== undefined ? err.retryAfterMs : step.retry.backoffMs);
  }
}

/** A message's JSON body, or undefined when it is not JSON (a malformed message is refused, not retried). */
function jsonOrUndefined(msg: JsMsg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}
