import type { AggregateDefinition } from './commandDefinition.ts';

/**
 * Characters of carried state per message, on average, that an aggregate may add to the stream: a state up to this
 * long travels with every message; a longer one with every `ceil(length / CHARS_PER_MESSAGE)`-th, the messages
 * between naming the last one that carries it. Every reader of the stream receives the header (skipped, not parsed,
 * but sent, stored and hashed by the MAC), so this bounds what cold loads cost everyone else: about 2-3 times an
 * event's ~400 bytes, where a node after inspection folds to about 6.5 KB (`scripts/bench/probe/carriedStateSize.ts`).
 */
export const CHARS_PER_MESSAGE = 1024;
/** The longest state (characters of JSON) a message carries: a larger one is left out, and loads read the events. */
export const MAX_STATE_CHARS = 32 * 1024;

/** Where the latest message carrying the whole state is: what the messages after it name until the next one. */
export interface CarriedAt {
  readonly seq: number;
  /** Its position: how many messages of the subject lie up to it. */
  readonly length: number;
  /** Characters of its state's JSON: how many messages may pass before the next one carries it again. */
  readonly chars: number;
}

/** What a message carries: the fold's state after it, or the sequence of the latest message before it that does. */
export type CarriedState<S> =
  | {
      readonly state: S;
      /**
       * Stream sequence of the oldest message whose command id the aggregate still remembers (`RememberedCommands`):
       * reading from there through the carrying message rebuilds them exactly as a full fold does.
       */
      readonly commandsFrom: number;
      readonly chars: number;
    }
  | { readonly stateAt: number };

/**
 * The `Bc-Aggregate-State` value for the message about to be appended at `position` with `state` after it:
 * `<stateVersion> <commandsFrom> <JSON>` (whole), or `<stateVersion> @<seq>` naming the latest message that carries
 * it whole while fewer messages than its length asks for (`CHARS_PER_MESSAGE`) have passed since. Undefined when the
 * aggregate declares no `stateVersion` or the JSON is longer than `MAX_STATE_CHARS`. `commandsFrom` is 0 when the
 * message being appended is the oldest one remembered (its sequence is not known before the append).
 */
export function encodeCarriedState<S>(
  aggregate: AggregateDefinition<S, any>,
  state: S,
  position: number,
  carriedAt: CarriedAt | undefined,
  commandsFrom: number | undefined,
): { value: string; chars?: number } | undefined {
  const version = aggregate.stateVersion;
  if (version === undefined) return undefined;
  if (carriedAt && position - carriedAt.length < Math.ceil(carriedAt.chars / CHARS_PER_MESSAGE)) return { value: `${version} @${carriedAt.seq}` };
  const json = JSON.stringify(state);
  if (json === undefined || json.length > MAX_STATE_CHARS) return undefined;
  return { value: `${version} ${commandsFrom ?? 0} ${json}`, chars: json.length };
}

/**
 * What a message at `seq` carries, when it was written by this aggregate's current fold (its `stateVersion`);
 * undefined for any other (another version: the code changed since, and the events are read and folded again). Only
 * a value whose MAC verified reaches here: the event store wrote it, so a malformed one is a bug, not an attack, and
 * is ignored the same way.
 */
export function decodeCarriedState<S>(aggregate: AggregateDefinition<S, any>, value: string, seq: number): CarriedState<S> | undefined {
  if (aggregate.stateVersion === undefined) return undefined;
  const versionEnd = value.indexOf(' ');
  if (versionEnd < 1 || value.slice(0, versionEnd) !== String(aggregate.stateVersion)) return undefined;
  if (value[versionEnd + 1] === '@') {
    const stateAt = Number(value.slice(versionEnd + 2));
    return Number.isSafeInteger(stateAt) && stateAt > 0 && stateAt < seq ? { stateAt } : undefined;
  }
  const fromEnd = value.indexOf(' ', versionEnd + 1);
  if (fromEnd < 0) return undefined;
  const from = Number(value.slice(versionEnd + 1, fromEnd));
  if (!Number.isSafeInteger(from) || from < 0 || from > seq) return undefined;
  try {
    const json = value.slice(fromEnd + 1);
    return { state: JSON.parse(json) as S, commandsFrom: from === 0 ? seq : from, chars: json.length };
  } catch {
    return undefined;
  }
}

/** Characters of the whole state a message's value carries under this version (told without parsing it), else undefined. */
export function wholeStateChars(aggregate: AggregateDefinition<any, any>, value: string): number | undefined {
  const version = aggregate.stateVersion;
  if (version === undefined) return undefined;
  const prefix = `${version} `;
  if (!value.startsWith(prefix) || value[prefix.length] === '@') return undefined;
  const fromEnd = value.indexOf(' ', prefix.length);
  return fromEnd < 0 ? undefined : value.length - fromEnd - 1;
}
