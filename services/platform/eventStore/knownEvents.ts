import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { EventMetadata } from '../../../schemas/envelope.ts';
import type { EventCatalog, EventDefinition, EventOf } from '../../../schemas/eventCatalog.ts';
import type { LogEntry } from './eventStore.ts';

export interface KnownEvent<E> {
  readonly event: E;
  readonly metadata: EventMetadata;
}

/** A log entry as a consumer uses it: the events its catalog knows, or why the whole message must be set aside. */
export type KnownEvents<E> =
  { readonly events: readonly KnownEvent<E>[]; readonly rejection?: undefined } | { readonly events?: undefined; readonly rejection: Rejection };

/**
 * The events of `entry` that `catalog` knows, upcast to their current versions. Types the catalog does not know are
 * left out (a newer writer may have added them; other consumers read them). A message the event store did not write,
 * or one with a known event its schema refuses, is rejected as a whole: a consumer never applies half a command.
 */
export function knownEvents<D extends EventDefinition>(entry: LogEntry, catalog: EventCatalog<D>): KnownEvents<EventOf<D>> {
  if (entry.rejection) return { rejection: entry.rejection };
  const events: KnownEvent<EventOf<D>>[] = [];
  for (const stored of entry.batch.events) {
    if (!catalog.has(stored.type)) continue;
    try {
      events.push({ event: catalog.read(stored), metadata: stored.metadata });
    } catch {
      return { rejection: { reason: 'UNDECODABLE', detail: `${stored.type} v${stored.version} does not match what this build reads` } };
    }
  }
  return { events };
}
