import type { NatsConnection } from '@nats-io/transport-node';
import { CommandBus } from '../platform/commands/commandBus.ts';
import type { CommandDefinition } from '../platform/commands/commandDefinition.ts';
import { natsCommandChannel, ProcessCommandChannel } from '../platform/commands/commandChannel.ts';
import type { Config } from '../platform/config.ts';
import { loadEventMac } from '../platform/eventStore/eventMac.ts';
import { EventStore } from '../platform/eventStore/eventStore.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { ensureStreams } from '../platform/nats/streams.ts';
import { retryWhileUnreachable } from '../platform/nats/retryWhileUnreachable.ts';
import { connectControlPlane } from './controlPlaneConnection.ts';

/** What every service process needs: configuration, a NATS connection, the event log, its command bus and a logger. */
export interface Runtime {
  readonly config: Config;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  /**
   * The process's one command bus, carrying the commands it was opened with: commands on one aggregate are serialised
   * within the process whichever entry point (HTTP route, NATS responder) sent them. Who may send what is decided at
   * each entry point by the command's `exposure`, not by the bus.
   */
  readonly bus: CommandBus;
  /** Where the process's engine commands go: its own `commands` service while it runs one, else NATS. */
  readonly commands: ProcessCommandChannel;
  readonly log: Logger;
}

/**
 * Opens the runtime of a process that decides `commands` itself (its bus carries those and refuses the rest). The
 * caller hands them in, so a process that decides none (a plugin worker sends its commands over NATS) never loads the
 * catalog and every decider with it (`test/unit/workerModuleGraph.unit.test.ts`).
 */
export async function openRuntime(config: Config, processName: string, commands: readonly CommandDefinition[]): Promise<Runtime> {
  const log = createLogger(processName, config.logLevel);
  // Each step waits out a server that is not up yet or too loaded to answer in time; a refusal still ends the process.
  const nc = await retryWhileUnreachable('connect', () => connectControlPlane(config, processName), log);
  await retryWhileUnreachable('declare the streams', () => ensureStreams(nc, config), log);
  const store = await retryWhileUnreachable('open the event log', () => openEventStore(nc, config), log);
  const bus = new CommandBus(store, commands, { retries: config.commandRetries });
  return { config, nc, store, bus, commands: new ProcessCommandChannel(natsCommandChannel(nc)), log };
}

/** The event log as a control-plane process sees it: batches written and verified with the control plane's event key. */
export async function openEventStore(
  nc: NatsConnection,
  config: Pick<Config, 'dataDir' | 'eventKey' | 'eventKeyFile' | 'streamReplicas'>,
): Promise<EventStore> {
  return EventStore.open(nc, loadEventMac(config), { replicas: config.streamReplicas });
}
