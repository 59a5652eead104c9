import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { EventBatch, EventMetadata } from '../../schemas/envelope.ts';
import { isEventBatch } from '../../services/platform/eventStore/eventBatchShape.ts';

/** Values of every JSON kind, and a few a writer's bug could put where a string or a positive integer goes. */
const oddValue = fc.oneof(
  fc.string(),
  fc.constantFrom(0, -1, 1, 2.5, 1e300, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, null, true, '1', [], {}),
  fc.jsonValue({ maxDepth: 2 }),
);
/** Mostly what the schema wants, else anything: most batches drawn are one field away from valid. */
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: oddValue });
/** Metadata with each field of the schema's shape present as a string, absent, or of another kind; sometimes an extra key. */
const metadataArb = fc
  .record(Object.fromEntries(Object.keys(EventMetadata.shape).map((name) => [name, fc.option(mostly(fc.string()), { nil: undefined, freq: 12 })])))
  .chain((m) => fc.option(fc.string(), { nil: undefined }).map((extra) => (extra === undefined ? m : { ...m, extra })));
const eventArb = fc.record(
  { type: mostly(fc.string()), version: mostly(fc.integer({ min: 1, max: 3 })), data: fc.jsonValue({ maxDepth: 2 }), metadata: mostly(metadataArb) },
  { requiredKeys: ['type', 'version', 'metadata'] },
);
const batchArb = mostly(
  fc.record({
    events: fc.oneof(
      { weight: 12, arbitrary: fc.array(eventArb, { minLength: 1, maxLength: 3 }) },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: oddValue },
    ),
  }),
);
const metadata = Object.fromEntries(Object.keys(EventMetadata.shape).map((k) => [k, k === 'requestDigest' ? undefined : `${k}-1`]));

describe('isEventBatch', () => {
  let acceptedCount = 0;
  test.prop([batchArb], { numRuns: 3_000 })('isEventBatch accepts exactly what EventBatch.safeParse accepts, for JSON as it is read', (value) => {
    // What a message holds is JSON: round-tripped, so an absent field and one set to undefined look alike, as they would.
    const read: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
    const accepted = EventBatch.safeParse(read).success;
    expect(isEventBatch(read)).toBe(accepted);
    if (accepted) acceptedCount++;
  });

  it('the generated batches include valid ones (the property above compares more than refusals)', () => {
    expect(acceptedCount).toBeGreaterThan(100);
  });

  it('isEventBatch refuses authentic-looking JSON that is no batch, and accepts a batch with a key its schema does not name', () => {
    const event = { type: 'SiteCreated', version: 1, data: { siteId: 'dc1' }, metadata };
    expect(isEventBatch({ events: [event] })).toBe(true);
    expect(isEventBatch({ events: [{ ...event, metadata: { ...metadata, extra: 1 } }], extra: true })).toBe(true);
    for (const bad of [
      [1, 2, 3],
      { events: [] },
      { events: [{ ...event, version: 0 }] },
      { events: [{ ...event, metadata: { ...metadata, actor: 7 } }] },
      null,
    ]) {
      expect(isEventBatch(bad)).toBe(false);
    }
    const { data: _, ...withoutData } = event;
    expect(isEventBatch({ events: [withoutData] })).toBe(EventBatch.safeParse({ events: [withoutData] }).success);
  });
});
