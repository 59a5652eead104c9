import type { AggregateDefinition } from './commandDefinition.ts';

/**
 * The longest state (characters of JSON) a message carries: a larger one is left out, and a load of a message without
 * one reads the events as before. Every reader of the stream receives the header (it is skipped, not parsed, but it is
 * sent, stored and hashed by the MAC), so a state much larger than its events would cost the whole fleet for the sake
 * of cold loads (bench/README.md, cold loads: a node with an inventory folds to about 1.5-3 KB).
 */
export const MAX_STATE_CHARS = 8 * 1024;

/** A state read back from a message: the fold's result after it, and where its remembered command ids begin. */
export interface CarriedState<S> {
  readonly state: S;
  /**
   * Stream sequence of the oldest message whose command id the aggregate still remembers (`RememberedCommands`):
   * reading from there through the carrying message rebuilds them exactly as a full fold does.
   */
  readonly commandsFrom: number;
}

/**
 * The `Bc-Aggregate-State` value for the state after an append: `<stateVersion> <commandsFrom> <JSON>`, or undefined
 * when the aggregate declares no `stateVersion` or the JSON is longer than `MAX_STATE_CHARS`. `commandsFrom` is 0 when
 * the message being appended is the oldest one remembered (its sequence is not known before the append).
 */
export function encodeCarriedState<S>(aggregate: AggregateDefinition<S, any>, state: S, commandsFrom: number | undefined): string | undefined {
  if (aggregate.stateVersion === undefined) return undefined;
  const json = JSON.stringify(state);
  if (json === undefined || json.length > MAX_STATE_CHARS) return undefined;
  return `${aggregate.stateVersion} ${commandsFrom ?? 0} ${json}`;
}

/**
 * The state a message at `seq` carries, when it was written by this aggregate's current fold (its `stateVersion`);
 * undefined for any other (another version: the code changed since, and the events are read and folded again).
 * Only a value whose MAC verified reaches here: the event store wrote it, so a malformed one is a bug, not an attack,
 * and is ignored the same way.
 */
export function decodeCarriedState<S>(aggregate: AggregateDefinition<S, any>, value: string, seq: number): CarriedState<S> | undefined {
  if (aggregate.stateVersion === undefined) return undefined;
  const versionEnd = value.indexOf(' ');
  const fromEnd = value.indexOf(' ', versionEnd + 1);
  if (versionEnd < 1 || fromEnd < 0 || value.slice(0, versionEnd) !== String(aggregate.stateVersion)) return undefined;
  const from = Number(value.slice(versionEnd + 1, fromEnd));
  if (!Number.isSafeInteger(from) || from < 0 || from > seq) return undefined;
  try {
    return { state: JSON.parse(value.slice(fromEnd + 1)) as S, commandsFrom: from === 0 ? seq : from };
  } catch {
    return undefined;
  }
}
