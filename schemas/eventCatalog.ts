import type { z } from 'zod';
import type { StoredEvent } from './envelope.ts';

/**
 * One event type at its current schema version. `upcasters[v]` turns data written at version `v` into version
 * `v + 1`; a reader applies them in order, so stored history is never rewritten.
 */
export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T;
  readonly version: number;
  readonly schema: S;
  readonly upcasters: Readonly<Record<number, (data: unknown) => unknown>>;
}

/** Declares an event type; `version` defaults to 1 (no upcasters needed). */
export function defineEvent<const T extends string, S extends z.ZodType>(
  type: T,
  schema: S,
  history: { version: number; upcasters: Record<number, (data: unknown) => unknown> } = { version: 1, upcasters: {} },
): EventDefinition<T, S> {
  for (let v = 1; v < history.version; v++) {
    if (!history.upcasters[v]) throw new Error(`event ${type}: missing upcaster from v${v} to v${v + 1}`);
  }
  return Object.freeze({ type, schema, version: history.version, upcasters: Object.freeze({ ...history.upcasters }) });
}

/** The `{ type, data }` union of a set of event definitions: what `decide` returns and `evolve` folds. */
export type EventOf<D extends EventDefinition> = D extends EventDefinition<infer T, infer S> ? { readonly type: T; readonly data: z.infer<S> } : never;

export class UnknownEventError extends Error {
  override readonly name = 'UnknownEventError';
  readonly code = 'UNKNOWN_EVENT';
  constructor(
    readonly eventType: string,
    readonly eventVersion: number,
  ) {
    super(`unknown event ${eventType} v${eventVersion}`);
  }
}

/** Looks events up by type, upcasts stored data to the current version and validates it. */
export class EventCatalog<D extends EventDefinition = EventDefinition> {
  readonly #byType = new Map<string, D>();

  constructor(definitions: readonly D[]) {
    for (const d of definitions) {
      if (this.#byType.has(d.type)) throw new Error(`event ${d.type} declared twice`);
      this.#byType.set(d.type, d);
    }
  }

  has(type: string): boolean {
    return this.#byType.has(type);
  }

  definition(type: string): D | undefined {
    return this.#byType.get(type);
  }

  /** Current-version data of a stored event; throws `UnknownEventError` for a type or version it cannot read. */
  read(stored: Pick<StoredEvent, 'type' | 'version' | 'data'>): EventOf<D> {
    const def = this.#byType.get(stored.type);
    if (!def || !Number.isInteger(stored.version) || stored.version < 1 || stored.version > def.version) {
      throw new UnknownEventError(stored.type, stored.version);
    }
    let data = stored.data;
    for (let v = stored.version; v < def.version; v++) data = def.upcasters[v]!(data);
    return { type: def.type, data: def.schema.parse(data) } as EventOf<D>;
  }

  /** Validates data about to be written at the current version. */
  write(event: EventOf<D>): { type: string; version: number; data: unknown } {
    const def = this.#byType.get(event.type);
    if (!def) throw new UnknownEventError(event.type, 0);
    return { type: def.type, version: def.version, data: def.schema.parse(event.data) };
  }
}
