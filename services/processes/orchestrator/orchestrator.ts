import type { NatsConnection } from '@nats-io/transport-node';
import type { eventCatalog } from '../../../schemas/events.ts';
import type { DefinitionsOf } from '../../platform/processManager/processManager.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { CommandChannel } from '../../platform/commands/commandChannel.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import { ProcessManagerHost } from '../../platform/processManager/processManagerHost.ts';
import { capsOf, type WorkflowConfig } from '../../workflow/config.ts';
import type { FleetModel } from './fleetModel.ts';
import { orchestration } from './orchestration.ts';

export { ORCHESTRATOR_DURABLE } from './orchestration.ts';

/**
 * `workflow-orchestrator`, the process manager of node lifecycles (`orchestration.ts` decides, the platform's
 * `ProcessManagerHost` consumes `bc.evt.>` in order, queues the reactions per workflow and sends the commands under
 * the leader lease).
 */
export class WorkflowOrchestrator {
  readonly #host: ProcessManagerHost<DefinitionsOf<typeof eventCatalog>, FleetModel>;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure: Promise<Error>;

  constructor(
    nc: NatsConnection,
    store: EventStore,
    config: WorkflowConfig,
    log: Logger,
    /** The leader lease this orchestrator runs under (stamped on its commands); none in tests that run it alone. */
    lease?: LeaseTerm,
    /** Where its commands go (default: NATS). */
    commands?: CommandChannel,
  ) {
    this.#host = new ProcessManagerHost(nc, store, orchestration(capsOf(config)), log, lease, commands);
    this.failure = this.#host.failure;
  }

  get model(): FleetModel {
    return this.#host.model;
  }

  start(): Promise<void> {
    return this.#host.start();
  }

  stop(): Promise<void> {
    return this.#host.stop();
  }
}
