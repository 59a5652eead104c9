import { PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { AppliedCommand } from './rememberedCommands.ts';

/** What makes a repeat of a command id the same command: its name, and the digest of a keyed client's request. */
export interface CommandIdentity {
  readonly commandName: string;
  readonly requestDigest: string | undefined;
}

/** A duplicate's answer: the sequence it was stored at and the events stored then. */
export interface StoredAnswer {
  readonly seq: number;
  readonly events: AppliedCommand['events'];
}

/**
 * A command id answers with its stored result only for the same command (and, for a client's idempotency key, the
 * same request): anything else is a reused key, never a reason to hand out another command's events.
 */
export function assertSameRequest(
  commandId: string,
  stored: { commandName?: string | undefined; requestDigest?: string | undefined },
  now: CommandIdentity,
): void {
  if (stored.commandName !== now.commandName) {
    throw new PlatformError(
      'IDEMPOTENCY_KEY_REUSED',
      `command id ${commandId} was used for ${stored.commandName ?? 'another command'}, not ${now.commandName}`,
    );
  }
  if (now.requestDigest !== undefined && stored.requestDigest !== now.requestDigest) {
    throw new PlatformError('IDEMPOTENCY_KEY_REUSED', `command id ${commandId} was used for ${now.commandName} with another body`);
  }
}

/**
 * A command id the aggregate's state remembers (`RememberedCommands`): answered with what it produced then, without
 * deciding again. Undefined when the state does not remember it.
 */
export function rememberedAnswer(commandId: string, applied: AppliedCommand | undefined, now: CommandIdentity): StoredAnswer | undefined {
  if (!applied) return undefined;
  assertSameRequest(commandId, applied, now);
  return { seq: applied.seq, events: applied.events };
}

/**
 * An append JetStream deduplicated (the id was stored earlier: by another process, or a reply that got lost): the
 * answer is what was stored, and only when it is this very command on this aggregate, since JetStream dedupes message
 * ids across every subject of the stream.
 */
export async function storedAnswer(
  store: Pick<EventStore, 'readAt'>,
  seq: number,
  subject: string,
  commandId: string,
  now: CommandIdentity,
): Promise<StoredAnswer> {
  const stored = await store.readAt(seq, 'leader');
  const metadata = stored?.batch?.events[0]?.metadata;
  if (!stored?.batch || stored.subject !== subject) {
    throw new PlatformError('IDEMPOTENCY_KEY_REUSED', `command id ${commandId} was used for another aggregate`);
  }
  assertSameRequest(commandId, { commandName: metadata?.commandName, requestDigest: metadata?.requestDigest }, now);
  return { seq, events: stored.batch.events.map(({ type, version, data }) => ({ type, version, data })) };
}
