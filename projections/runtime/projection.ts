import type { Database } from 'better-sqlite3';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';

/** Where an event sits in the log. */
export interface LogPosition {
  readonly seq: number;
  readonly subject: string;
}

/**
 * A read model: numbered migrations (index + 1 is the schema version) and a pure event → SQL step. `apply` runs
 * inside the batch transaction that also stores the checkpoint, so it needs no idempotency of its own: a message
 * at or below the checkpoint never reaches it.
 */
export interface Projection {
  readonly name: string;
  readonly migrations: readonly string[];
  apply(db: Database, event: PlatformEvent, metadata: EventMetadata, position: LogPosition): void;
}

export function defineProjection(projection: Projection): Projection {
  return Object.freeze(projection);
}
