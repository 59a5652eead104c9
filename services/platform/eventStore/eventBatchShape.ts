import { EventMetadata, type EventBatch } from '../../../schemas/envelope.ts';

/** The metadata fields, required or optional, as `EventMetadata` declares them (each a string: checked below). */
const metadataFields = Object.entries(EventMetadata.shape).map(([name, schema]) => {
  if (!schema.safeParse('text').success || schema.safeParse(1).success) throw new Error(`isEventBatch reads metadata.${name} as a string; its schema changed`);
  return { name, optional: schema.safeParse(undefined).success };
});

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function isMetadata(value: unknown): boolean {
  if (!isRecord(value)) return false;
  for (const { name, optional } of metadataFields) {
    const field = value[name];
    if (typeof field !== 'string' && !(optional && field === undefined)) return false;
  }
  return true;
}

function isStoredEvent(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { type, version } = value;
  return typeof type === 'string' && Number.isSafeInteger(version) && (version as number) > 0 && 'data' in value && isMetadata(value.metadata);
}

/**
 * Whether parsed JSON is an `EventBatch`, by the rules of its zod schema (`schemas/envelope.ts`; a test holds the two
 * to the same answers), checked where it lies: `EventBatch.safeParse` copied every object of every message it
 * accepted, garbage that a catch-up paid for in collection. Unlike the parse, keys the schema does not name are kept
 * (a newer writer's), not stripped; readers read only the fields they know.
 */
export function isEventBatch(value: unknown): value is EventBatch {
  if (!isRecord(value)) return false;
  const { events } = value;
  if (!Array.isArray(events) || events.length === 0) return false;
  for (const event of events) if (!isStoredEvent(event)) return false;
  return true;
}
