import type { NatsConnection } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';
import type { Config } from '../platform/config.ts';
import { loadEventMac } from '../platform/eventStore/eventMac.ts';
import { EventStore } from '../platform/eventStore/eventStore.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { connectNats } from '../platform/nats/connect.ts';
import { ensureStreams } from '../platform/nats/streams.ts';

/** What every service process needs: configuration, a NATS connection, the event log and a logger. */
export interface Runtime {
  readonly config: Config;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  readonly log: Logger;
}

export async function openRuntime(config: Config, processName: string): Promise<Runtime> {
  const log = createLogger(processName, config.logLevel);
  // Operator mode: the credentials `npm start` issued for this process (`BC_NATS_CREDS`); control-plane inboxes are `_INBOX`.
  const credentials = config.natsCredsFile ? { creds: readFileSync(config.natsCredsFile, 'utf8'), inboxPrefix: '_INBOX' } : undefined;
  const nc = await connectNats(config.natsUrl, processName, credentials ? { credentials } : {});
  await ensureStreams(nc, config);
  return { config, nc, store: await openEventStore(nc, config), log };
}

/** The event log as a control-plane process sees it: batches written and verified with the control plane's event key. */
export async function openEventStore(nc: NatsConnection, config: Pick<Config, 'dataDir' | 'eventKey' | 'eventKeyFile'>): Promise<EventStore> {
  return EventStore.open(nc, loadEventMac(config));
}
