import type { JoinAttestorName } from '../../schemas/trust/joinTokens.ts';
import { setMaxListeners } from 'node:events';
import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StoredMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { WorkMessage } from '../../schemas/metal/workflow.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { CommandBus } from '../platform/commands/commandBus.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { isTransportFailure } from '../platform/nats/transportFailure.ts';
import type { MasterKey } from '../secrets/masterKey.ts';
import { nodeAggregate } from '../metal/node/node.ts';
import { instanceRef } from '../../schemas/vps/instanceState.ts';
import { type AgentJoin } from '../agents/agentGateway.ts';
import { startAgentLiveness, type AgentLiveness } from '../agents/agentLiveness.ts';
import { startAgentWatches } from '../agents/agentWatches.ts';
import { startControlPlaneResultIntake, type ResultIntake } from '../agents/resultIntake.ts';
import type { RefusalTallyOptions } from '../platform/refusalTally.ts';
import type { StreamWatch } from '../agents/streamWatch.ts';
import { BlobStore } from '../blobs/blobStore.ts';
import { openOnFirstUse } from '../platform/openOnFirstUse.ts';
import { builtinSteps } from '../plugins/builtinSteps.ts';
import { bindStepOutputs } from './stepOutputs.ts';
import type { AgentEndpoints, StepDefinition } from '../../plugins/sdk/defineStep.ts';
import type { WorkflowConfig } from './config.ts';
import { ResultRejectedError, RetryableError, StepNotReadyError, TerminalError } from '../../plugins/sdk/stepErrors.ts';
import { claimAttempt, type ClaimedAttempt, type StepCommandSender } from './attemptClaim.ts';
import { buildStepContext, type StepContextDeps } from './stepContext.ts';
import { buildInstanceStepContext } from './instanceStepContext.ts';
import { stepCommandSender } from './stepCommands.ts';
import { executorCommands } from './executorCommands.ts';
import { refuseAttestedWorkflowWithoutBrokerAuth } from './anonymousBrokerPolicy.ts';

export const EXECUTOR_DURABLE = 'workflow_executor';
/** How often a destructive step waiting for its approval batch looks again. */
const APPROVAL_RECHECK_MS = 3_000;
/**
 * A work message whose scheduling the log does not show yet (read from a replica still catching up) is looked at again
 * this soon, up to this many deliveries (about 30 s) before it is taken for one that was never scheduled.
 */
const BEHIND_RECHECK_MS = 500;
const BEHIND_MAX_DELIVERIES = 60;

/**
 * `workflow-executor`: any number of processes share one durable consumer on `bc.work.control-plane.>`. Each work
 * message is one step attempt; its outcome is recorded on the workflow before the message is acked (`ack`),
 * retried (`nak(delay)`) or given up (`term`). A stopped executor leaves its messages unacked: they come back after
 * the ack wait and resume the same attempt (same agent command id, so the agent never sees it twice).
 */
export class WorkflowExecutor {
  /**
   * Runs the attempt's own workflow commands and the join tokens steps mint (`ctx.pki`, never served over NATS); its
   * repository is the executor's cache of every aggregate it reads.
   */
  readonly #bus: CommandBus;
  readonly #abort = new AbortController();
  #messages: ConsumerMessages | undefined;
  /** Made once: `js.jetstreamManager()` costs an account-info request each time it is called. */
  #jsm: JetStreamManager | undefined;
  readonly #js: JetStreamClient;
  /** Opened on first use: most steps never store an artefact. */
  readonly #blobs = openOnFirstUse(() => BlobStore.open(this.nc, this.options.blobBaseUrl ?? 'http://127.0.0.1:8080'));
  #watches: { results: StreamWatch<StoredMsg>; joins: StreamWatch<AgentJoin> } | undefined;
  #liveness: AgentLiveness | undefined;
  #intake: ResultIntake | undefined;

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
      /** How the join tokens its steps mint are attested: a plugin's worker says `provisioned`. Default `issued`. */
      mintsAs?: JoinAttestorName;
      /** Whose work it takes: default the platform's (`bc.work.control-plane.>`); a plugin's replicas share `plugin_<id>`. */
      work?: { durable: string; filterSubject: string };
      /** Where machines fetch step artefacts (`ctx.blobs` URLs): the API's public address. */
      blobBaseUrl?: string;
      /** How machines' agents reach the platform (`ctx.agentEndpoints`). */
      agentEndpoints?: AgentEndpoints;
      /** The process's command bus (it must carry `executorCommands`). */
      bus?: CommandBus;
      /** The broker's auth (`BC_NATS_AUTH`): under `none` attestation-bearing workflows are refused. Default `operator`. */
      natsAuth?: 'operator' | 'none';
      /**
       * Whether this executor also runs a replica of the result intake (`resultIntake.ts`), and how it counts refusals.
       * Default on: the platform's executors take agents' results in (for every command, a plugin step's too); a plugin's
       * executor runs none.
       */
      resultIntake?: false | { refusals?: RefusalTallyOptions };
    } = {},
  ) {
    // The process's own bus when it has one (commands on one aggregate serialised process-wide), else one of its own.
    this.#bus = options.bus ?? new CommandBus(store, executorCommands, { retries: 5 });
    // Every running attempt waits on this one signal: hundreds of listeners are the design, not a leak.
    setMaxListeners(0, this.#abort.signal);
    this.#js = jetstream(nc);
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
    // Agents hand their results to the intake, which stores only answers to commands sent to them; every executor runs one.
    const intake = this.options.resultIntake ?? {};
    if (intake) this.#intake = await startControlPlaneResultIntake(this.nc, { repository: this.#bus.repository, bus: this.#bus, log: this.log, ...intake });
    this.#liveness = startAgentLiveness(this.nc, { repository: this.#bus.repository, timeoutMs: this.config.agentHeartbeatTimeoutMs, log: this.log });
    const consumer = await this.#js.consumers.get(Streams.work.name, durable);
    this.#messages = await consumer.consume({
      max_messages: this.config.executorConcurrency,
      callback: (msg) => void this.handle(msg),
    });
  }

  /** Stops taking work and abandons running attempts without acking them, as a crash would. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#messages?.close().catch(() => undefined);
    await Promise.all([this.#watches?.results.stop(), this.#watches?.joins.stop(), this.#liveness?.stop(), this.#intake?.stop()]);
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

  /** Claim the attempt, build its context, run the step, record the outcome. */
  private async runAttempt(msg: JsMsg, signal: AbortSignal): Promise<void> {
    const parsed = WorkMessage.safeParse(jsonOrUndefined(msg));
    if (!parsed.success) return msg.term('malformed work message');
    const { stepIndex } = parsed.data;
    const send = stepCommandSender(this.#bus, this.log, signal);
    const claim = await claimAttempt(this.#bus.repository, send, parsed.data);
    if (claim.kind === 'settled') return msg.ack();
    if (claim.kind === 'awaiting-approval') return msg.nak(APPROVAL_RECHECK_MS);
    if (claim.kind === 'behind') {
      if (msg.info.deliveryCount < BEHIND_MAX_DELIVERIES) return msg.nak(BEHIND_RECHECK_MS);
      this.log.error({ work: parsed.data, deliveries: msg.info.deliveryCount }, 'the log never showed this step scheduled; dropping its work message');
      return msg.term('step never scheduled');
    }
    const step = claim.wf.steps[stepIndex]!;
    const deadlineMs = (claim.startedAt ? Date.parse(claim.startedAt) : Date.now()) + step.timeoutMs;
    const outcome = await this.runStep(msg, signal, claim, stepIndex, deadlineMs, send);
    if (outcome.kind === 'not-ready') return msg.nak(outcome.retryAfterMs);
    await this.record(msg, claim, stepIndex, outcome, send);
  }

  private async runStep(
    msg: JsMsg,
    signal: AbortSignal,
    claim: ClaimedAttempt,
    stepIndex: number,
    deadlineMs: number,
    send: StepCommandSender,
  ): Promise<Outcome> {
    const { wf, attempt } = claim;
    const step = wf.steps[stepIndex]!;
    const steps = this.options.steps ?? builtinSteps;
    const definition = steps.get(step.id);
    // The node (or instance) is not the attempt's own: other processes change it, so it is read from the log.
    const target = wf.instance;
    const repository = this.#bus.repository;
    const node = target ? undefined : (await repository.loadAccepting(nodeAggregate, wf.nodeId, (n) => n.exists)).state;
    const instance = target ? (await repository.loadAccepting(instanceRef, target.instanceId, (i) => i.tenantId === target.tenantId)).state : undefined;
    let evidence: (() => string | undefined) | undefined;
    try {
      if (!definition) throw new TerminalError('PRECONDITION_FAILED', `no step implementation "${step.id}"`);
      refuseAttestedWorkflowWithoutBrokerAuth(this.options.natsAuth ?? 'operator', wf, steps);
      if (node && !node.exists) throw new TerminalError('NOT_FOUND', `node ${wf.nodeId} does not exist`);
      if (target && instance?.tenantId !== target.tenantId) throw new TerminalError('NOT_FOUND', `instance ${target.instanceId} does not exist`);
      if (claim.approval === 'expired')
        throw new TerminalError(
          'APPROVAL_EXPIRED',
          `the approval batch expired at ${wf.approval!.expiresAt} before reaching ${wf.approval!.threshold} signatures`,
        );
      // An attempt started before attempts had nonces cannot bind its commands' results: the next attempt will.
      if (!claim.nonce)
        throw new RetryableError('PRECONDITION_FAILED', `attempt ${attempt} started without a nonce; retrying as a new attempt`, { retryAfterMs: 0 });
      const input = definition.input.safeParse(bindStepOutputs(step.params, wf, stepIndex));
      if (!input.success) throw new TerminalError('VALIDATION_FAILED', `step ${step.id} params are invalid: ${input.error.message}`);
      const heartbeat = () => msg.working();
      const built =
        node?.exists && !target
          ? buildStepContext(this.contextDeps(), { claim, stepIndex, definition, node, deadlineMs, signal, heartbeat, send })
          : {
              context: buildInstanceStepContext(this.contextDeps(), { claim, stepIndex, target: target!, instance: instance!, deadlineMs, signal, heartbeat }),
              evidence: () => undefined,
            };
      evidence = built.evidence;
      // Assigned, not spread: an instance's context has a `node` getter that fails the step only when a step reads it.
      const inputData: unknown = input.data;
      const output: unknown = await definition.run(Object.assign(built.context, { input: inputData }));
      const checked = definition.output ? definition.output.safeParse(output) : { success: true as const, data: output };
      if (!checked.success)
        throw new TerminalError('VALIDATION_FAILED', `step ${step.id} returned an output that does not match its schema: ${checked.error.message}`);
      return { kind: 'succeeded', output: checked.data, evidence: evidence() };
    } catch (error) {
      // The server went away mid-step: not the step's failure. The same attempt resumes (same command id) on redelivery.
      if (signal.aborted || isTransportFailure(error)) throw error;
      if (error instanceof StepNotReadyError && Date.now() < deadlineMs) {
        this.log.debug({ workflowId: wf.workflowId, step: step.id, attempt, reason: error.reason }, 'step not ready; running it again later');
        return { kind: 'not-ready', retryAfterMs: Math.min(error.retryAfterMs, Math.max(100, deadlineMs - Date.now())) };
      }
      return {
        kind: 'failed',
        error: error instanceof StepNotReadyError ? new RetryableError('STEP_TIMEOUT', `still not ready at the step timeout: ${error.reason}`) : error,
      };
    }
  }

  /** Records the attempt's outcome on the workflow, then settles the work message accordingly. */
  private async record(
    msg: JsMsg,
    claim: ClaimedAttempt,
    stepIndex: number,
    outcome: Exclude<Outcome, { kind: 'not-ready' }>,
    send: StepCommandSender,
  ): Promise<void> {
    const { wf, attempt, attemptId } = claim;
    const step = wf.steps[stepIndex]!;
    const ids = { workflowId: wf.workflowId, stepIndex, attempt };
    if (outcome.kind === 'succeeded') {
      await send(
        'workflow.completeStep',
        { ...ids, output: outcome.output ?? null, ...(outcome.evidence ? { signedResult: outcome.evidence } : {}) },
        `${attemptId}-ok`,
      );
      return msg.ack();
    }
    const err = outcome.error;
    const rejected = err instanceof ResultRejectedError;
    // A refused result for a destructive command is never retried: nothing proves what the machine did.
    const retryable = rejected ? !step.destructive : !(err instanceof TerminalError);
    const code = err instanceof TerminalError || err instanceof RetryableError || rejected ? err.code : 'INTERNAL';
    const message = err instanceof Error ? err.message : String(err);
    this.log.warn({ workflowId: wf.workflowId, step: step.id, attempt, code, message, retryable }, 'step attempt failed');
    const result = await send(
      'workflow.failStep',
      { ...ids, code, message: message.slice(0, 1000), retryable, ...(rejected ? { rejected: { commandId: err.commandId, reason: err.reason } } : {}) },
      `${attemptId}-fail`,
    );
    const workflowOver = !result || result.events.some((e) => e.type === 'WorkflowFailed' || e.type === 'WorkflowCancelled');
    if (workflowOver) return msg.term();
    // Restarted from the boot: this step runs again only once the boot is done, as new work.
    if (result.events.some((e) => e.type === 'WorkflowRewound')) return msg.ack();
    msg.nak(err instanceof RetryableError && err.retryAfterMs !== undefined ? err.retryAfterMs : step.retry.backoffMs);
  }

  private contextDeps(): StepContextDeps {
    return {
      nc: this.nc,
      js: this.#js,
      jsm: this.#jsm!,
      repository: this.#bus.repository,
      watches: this.#watches!,
      liveness: this.#liveness,
      recheckMs: this.config.resultRecheckMs,
      ramdiskBootBudgetMs: this.config.ramdiskBootBudgetMs,
      log: this.log,
      mint: (name, payload, commandId) => this.#bus.execute({ name, payload, commandId, causationId: commandId, actor: 'workflow-executor' }),
      mintsAs: this.options.mintsAs ?? 'issued',
      blobs: this.#blobs,
      masterKey: this.options.masterKey,
      agentEndpoints: this.options.agentEndpoints,
    };
  }
}

/** How a step's run ended: an output to record, an error to record, or not ready yet (the work comes back later). */
type Outcome =
  { kind: 'succeeded'; output: unknown; evidence: string | undefined } | { kind: 'failed'; error: unknown } | { kind: 'not-ready'; retryAfterMs: number };

/** A message's JSON body, or undefined when it is not JSON (a malformed message is refused, not retried). */
function jsonOrUndefined(msg: JsMsg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}
