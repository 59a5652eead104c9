import type { ConsumerMessages, ConsumerNotification } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { closeWhenSilent, SILENT_HEARTBEATS } from '../../services/platform/nats/silentConsumer.ts';

/** A consumer whose status stream says `statuses`, then stays open until closed; records its closes. */
function consumerSaying(statuses: ConsumerNotification[]) {
  const closes: number[] = [];
  let release!: () => void;
  const closed = new Promise<void>((r) => (release = r));
  const messages = {
    status: () =>
      (async function* () {
        yield* statuses;
        await closed;
      })(),
    close: async () => {
      closes.push(Date.now());
      release();
    },
  } as unknown as ConsumerMessages;
  return { messages, closes };
}

const missed = (count: number): ConsumerNotification => ({ type: 'heartbeats_missed', count });

describe('closeWhenSilent', () => {
  it(`closes a consumer once ${SILENT_HEARTBEATS} heartbeats in a row are missed, and says so once`, async () => {
    const { messages, closes } = consumerSaying([
      missed(1),
      { type: 'heartbeat', lastConsumerSequence: 1, lastStreamSequence: 1 },
      missed(2),
      missed(3),
      missed(4),
    ]);
    const said: number[] = [];
    await closeWhenSilent(messages, (n) => said.push(n));
    expect(said).toEqual([3]);
    expect(closes).toHaveLength(1);
  });

  it('leaves a consumer that misses fewer heartbeats open', async () => {
    const { messages, closes } = consumerSaying([missed(1), missed(2)]);
    const said: number[] = [];
    const watching = closeWhenSilent(messages, (n) => said.push(n));
    await new Promise((r) => setTimeout(r, 50));
    expect([said, closes]).toEqual([[], []]);
    await messages.close();
    await watching.catch(() => undefined);
  });
});
