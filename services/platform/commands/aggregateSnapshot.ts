import type { StoredEvent } from '../../../schemas/envelope.ts';
import type { LogEntry } from '../eventStore/eventStore.ts';
import { decodeCarriedState, type CarriedAt } from './aggregateState.ts';
import type { AggregateDefinition } from './commandDefinition.ts';
import { RememberedCommands, type AppliedCommand } from './rememberedCommands.ts';

/** An aggregate's state as of a message of its subject, with what a command on it needs besides (`AggregateRepository`). */
export interface AggregateSnapshot<S> {
  readonly state: S;
  /** Stream sequence of the subject's last message this snapshot accounts for, folded or skipped (0: none). */
  readonly seq: number;
  /**
   * How many messages of the subject it accounts for, folded or skipped: the next append stores one more as its
   * position, which tells a later cold load at its first get how long the read before the last message is.
   */
  readonly length: number;
  readonly commands: RememberedCommands;
  /**
   * Set when the state came from a message's carried state (`aggregateState.ts`): the command ids of the messages from
   * this sequence through `seq` are not read yet (`commands` is empty), and `withCommands` reads them.
   */
  readonly commandsFrom?: number | undefined;
  /** The latest message known to carry the whole state (`aggregateState.ts`): the next appends name it until one carries it again. */
  readonly carriedAt?: CarriedAt | undefined;
}

/** What a message's command produced, as `RememberedCommands` keeps it. */
export function appliedCommand(seq: number, events: readonly StoredEvent[]): AppliedCommand {
  const { commandName, requestDigest } = events[0]!.metadata;
  return { seq, events: events.map(({ type, version, data }) => ({ type, version, data })), commandName, requestDigest };
}

/** The state after an append's events, and what its message carries (`aggregateState.ts`). */
export interface StateAfter<S> {
  readonly state: S;
  readonly carried: string | undefined;
  /** Characters of the state's JSON when the message carries it whole. */
  readonly wholeChars: number | undefined;
}

/**
 * The snapshot a message's carried state stands for, when it carries the whole state under the current fold;
 * `'named'` when it names an earlier message that does; undefined when it carries nothing to use.
 */
export function carriedSnapshot<S>(aggregate: AggregateDefinition<S>, entry: LogEntry): AggregateSnapshot<S> | 'named' | undefined {
  if (entry.rejection || entry.state === undefined || entry.position === undefined) return undefined;
  const carried = decodeCarriedState(aggregate, entry.state, entry.seq);
  if (carried === undefined) return undefined;
  if (!('state' in carried)) return 'named';
  const length = entry.position;
  return {
    state: carried.state,
    seq: entry.seq,
    length,
    commands: RememberedCommands.none,
    commandsFrom: carried.commandsFrom,
    carriedAt: { seq: entry.seq, length, chars: carried.chars },
  };
}
