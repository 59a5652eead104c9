import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { DURABLE_PULL } from '../../services/platform/nats/durablePull.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';

describe('a durable consumer loop on DURABLE_PULL', () => {
  // Regression (consumerLoss e2e in CI): a durable deleted between the owner's consumer info and its first pull left
  // the loop waiting 30 s, the client's default, for two missed heartbeats.
  it('ends within three heartbeat intervals when the durable was deleted before the first pull reached the server', { timeout: 30_000 }, async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'test');
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'LOSS', subjects: ['loss.>'] });
      await jsm.consumers.add('LOSS', { durable_name: 'gone', ack_policy: AckPolicy.Explicit });
      const consumer = await jetstream(nc).consumers.get('LOSS', 'gone');
      await jsm.consumers.delete('LOSS', 'gone');
      const started = Date.now();
      const messages = await consumer.consume({ max_messages: 10, ...DURABLE_PULL });
      const ended = (async () => {
        for await (const msg of messages) msg.ack();
      })();
      await expect(ended).rejects.toThrow(/consumer not found/);
      // Two missed heartbeats, the first check possibly on the boundary, and room for a loaded machine.
      expect(Date.now() - started).toBeLessThan(3 * DURABLE_PULL.idle_heartbeat + 5_000);
    } finally {
      await nc.close();
    }
  });
});
