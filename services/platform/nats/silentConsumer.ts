import type { ConsumerMessages } from '@nats-io/jetstream';

/** Heartbeats missed in a row before a long-lived consumer is given up: 3 × half the pull's expiry. */
export const SILENT_HEARTBEATS = 3;

/**
 * Closes `messages` once its heartbeats stop, calling `onSilent` first. After a stream's leader dies, an ordered
 * consumer can go on missing heartbeats without ever recreating itself or failing (its info still answers while its
 * pulls go nowhere), and whoever iterates it waits forever: CI saw the result intake refuse every result of a chaos run
 * for minutes. Closed, the iteration ends and its owner opens a fresh consumer where it left off. (Catch-up reads
 * have their own deadline: `withinReplayDeadline`.)
 */
export async function closeWhenSilent(messages: ConsumerMessages, onSilent: (missed: number) => void): Promise<void> {
  for await (const status of messages.status()) {
    if (status.type === 'heartbeats_missed' && status.count >= SILENT_HEARTBEATS) {
      onSilent(status.count);
      await messages.close().catch(() => undefined);
      return;
    }
  }
}
