import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentHeartbeat } from '../../../schemas/agent/agentHeartbeat.ts';
import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import { startAgentPresence, type AgentPresenceView } from '../../agents/agentPresence.ts';
import { sendAgentCommand } from '../../agents/agentExchange.ts';
import { BlobStore } from '../../blobs/blobStore.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import type { CommandChannel } from '../../platform/commands/commandChannel.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import { openOnFirstUse } from '../../platform/openOnFirstUse.ts';
import { ProcessManagerHost } from '../../platform/processManager/processManagerHost.ts';
import type { RolloutControllerConfig } from './config.ts';
import type { RolloutControllerModel } from './controllerModel.ts';
import { moduleApplyCommand, type ModuleApplySources } from './moduleApplyCommand.ts';
import { ApplyResults } from './applyResults.ts';
import { refusalLookbackStart } from './refusalLookback.ts';
import { rolloutControl, type ControllerObservation, type ControllerTask, type RolloutControlEvents } from './rolloutControl.ts';
import { PLAN_APPLY_VALID_MS } from './planApplyReactions.ts';

export { ROLLOUT_CONTROLLER_DURABLE, ROLLOUT_EVENTS_FILTER } from './rolloutControl.ts';

/** Refusals of a `module.apply` no retry changes: the host then says nothing of the version and its wave times it out. */
const unbuildable = new Set(['NOT_FOUND', 'PRECONDITION_FAILED']);

/** The modules a verified heartbeat reports, as the controller observes them (`at`: when this process heard it). */
export const observationsOf = (heartbeat: AgentHeartbeat, receivedAtMs: number): HostModuleObservation[] =>
  (heartbeat.modules ?? []).map(({ name, ...report }) => ({ ...report, host: heartbeat.nodeId, module: name, at: receivedAtMs }));

export interface RolloutControllerDeps {
  /** The control plane's public URL: bundles reach hosts through capability URLs under it (`/v1/blobs/...`). */
  blobBaseUrl: string;
  lease?: LeaseTerm;
  commands?: CommandChannel;
}

/**
 * `rollout-controller` (issue 35): the rollout process manager (`rolloutControl.ts`) on the platform's
 * `ProcessManagerHost`, its durable over `bc.evt.fleet.>`; the modules of every heartbeat that verified against its
 * host agent's registered key (`agentPresence.ts`; an unsigned or foreign one is never heard) are its observations;
 * `module.apply` goes to the host as an agent command whose signed result and next heartbeats the host answers with:
 * a verified result refusing it (`applyResults.ts`) is the host's failed outcome at once.
 */
export class RolloutController {
  readonly #host: ProcessManagerHost<RolloutControlEvents, RolloutControllerModel, ControllerTask, ControllerObservation>;
  readonly #presence: () => AgentPresenceView;
  #heard: AgentPresenceView | undefined;
  readonly #applyResults: (since: Date) => ApplyResults;
  #refusals: ApplyResults | undefined;
  #stopping = false;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure: Promise<Error>;

  constructor(nc: NatsConnection, store: EventStore, config: RolloutControllerConfig, log: Logger, deps: RolloutControllerDeps) {
    const repository = new AggregateRepository(store);
    const js = jetstream(nc);
    const sources: ModuleApplySources = {
      repository,
      blobs: openOnFirstUse(() => BlobStore.open(nc, deps.blobBaseUrl)),
      probeTimeoutMs: config.probeTimeoutMs,
    };
    const apply = async (task: ControllerTask, model: RolloutControllerModel, signal: AbortSignal) => {
      // A rollout's apply is valid for its wave; one ended while the task waited (aborted, say) asks no host any more.
      const run = task.type === 'module.apply' ? model.activeRun(task.rolloutId) : undefined;
      if (task.type === 'module.apply' && run === undefined) return;
      const workflow = task.type === 'module.apply' ? { rolloutId: task.rolloutId } : { requestId: task.requestId };
      let command;
      try {
        command = await moduleApplyCommand(sources, task, Date.now() + (run?.options.waveTimeoutMs ?? PLAN_APPLY_VALID_MS));
      } catch (err) {
        if (!(err instanceof PlatformError && unbuildable.has(err.code))) throw err;
        log.warn({ ...workflow, host: task.host, code: err.code, detail: err.message }, 'module.apply not sent: the host is not asked');
        return;
      }
      signal.throwIfAborted();
      await sendAgentCommand({ js }, command);
      log.info({ ...workflow, host: task.host, version: task.version, commandId: task.commandId }, 'module.apply sent');
    };
    const host = new ProcessManagerHost(nc, store, rolloutControl({ tickMs: config.tickMs, apply }), log, deps.lease, deps.commands);
    this.#host = host;
    this.#presence = () =>
      startAgentPresence(nc, {
        repository,
        // Only its `onVerified` is used: liveness is the sensors' and the executors' business.
        windowMs: 60_000,
        log,
        onVerified: (heartbeat, at) => {
          for (const observation of observationsOf(heartbeat, at)) host.observe(observation);
        },
      });
    // A refused apply is heard from its verified result, so the breaker counts it in seconds, not at the deadline.
    this.#applyResults = (since) => new ApplyResults(nc, { repository, log, since, onRefused: (refusal) => host.observe(refusal) });
    this.failure = host.failure;
  }

  get model(): RolloutControllerModel {
    return this.#host.model;
  }

  /**
   * Listens first: the heartbeats heard while the model catches up with the log are folded, then decided on. The
   * refused applies are read once the model caught up, from the start of the earliest wave still waiting
   * (`refusalLookbackStart`): a refusal heard after the first decisions is decided as it comes.
   */
  async start(): Promise<void> {
    this.#heard = this.#presence();
    const startedAt = Date.now();
    await this.#host.start();
    if (this.#stopping) return;
    this.#refusals = this.#applyResults(new Date(refusalLookbackStart(this.model, startedAt)));
    await this.#refusals.start();
  }

  /** The host first: its reactions in flight are aborted at once (their events go back to the durable). */
  async stop(): Promise<void> {
    this.#stopping = true;
    const stopped = this.#host.stop();
    await this.#heard?.stop();
    await this.#refusals?.stop();
    await stopped;
  }
}
