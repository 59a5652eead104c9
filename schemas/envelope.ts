import { z } from 'zod';

/** Who did what, when and why: carried by every stored event, shared by all events of one command. */
export const EventMetadata = z.object({
  eventId: z.string(),
  aggregateType: z.string(),
  aggregateId: z.string(),
  commandId: z.string(),
  commandName: z.string(),
  correlationId: z.string(),
  causationId: z.string(),
  actor: z.string(),
  time: z.string(),
  /** Digest of the client request behind a command sent with an `Idempotency-Key`: a reuse with another body is refused. */
  requestDigest: z.string().optional(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

/**
 * An event as stored: `version` is the schema version it was written with; readers upcast older versions to the
 * current one before validating `data` (see `schemas/eventCatalog.ts`).
 */
export const StoredEvent = z.object({
  type: z.string(),
  version: z.number().int().positive(),
  data: z.unknown(),
  metadata: EventMetadata,
});
export type StoredEvent = z.infer<typeof StoredEvent>;

/**
 * One JetStream message: all events one command produced. JetStream 2.9 has no atomic multi-message publish, so a
 * command's events travel together in one message on the aggregate's subject.
 */
export const EventBatch = z.object({ events: z.array(StoredEvent).min(1) });
export type EventBatch = z.infer<typeof EventBatch>;
