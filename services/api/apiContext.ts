import type { NatsConnection } from '@nats-io/transport-node';
import type { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import type { Config } from '../platform/config.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Metrics } from './metrics.ts';

/**
 * What the API process serves from: the process's one command bus (every command; each route sends only what its
 * callers may, by the commands' `exposure`), the log, and the read models by name.
 */
export interface ApiContext {
  readonly config: Config;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  readonly bus: CommandBus;
  readonly readers: ReadonlyMap<string, ReadModelReader>;
  readonly metrics: Metrics;
}

/** The read model a route serves, or a clear error when this process was not given it. */
export function readerOf(ctx: ApiContext, name: string): ReadModelReader {
  const reader = ctx.readers.get(name);
  if (!reader) throw new Error(`read model ${name} is not configured in this API process`);
  return reader;
}
