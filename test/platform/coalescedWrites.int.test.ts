import { describe, expect, it } from 'vitest';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';

interface WithTransport {
  protocol: { transport: { send(frame: Uint8Array): void } };
}

/** Counts the socket writes a connection makes from now on. */
function countWrites(nc: unknown): () => number {
  const transport = (nc as WithTransport).protocol.transport;
  const send = transport.send.bind(transport);
  let writes = 0;
  transport.send = (frame) => {
    writes++;
    send(frame);
  };
  return () => writes;
}

describe('coalesced socket writes on a connection from connectNats', () => {
  it('sends what the callbacks of one event-loop turn queued in one write, in order', async () => {
    await using nats = await startTestNats();
    const [sender, receiver] = [await connectNats(nats.url, 'sender'), await connectNats(nats.url, 'receiver')];
    try {
      const got: string[] = [];
      const sub = receiver.subscribe('turn.>', { max: 50, callback: (_err, msg) => void got.push(msg.string()) });
      await receiver.flush();
      const writes = countWrites(sender);
      // Fifty timer callbacks due together run in one timers phase: one message each, as fifty acks or replies would.
      await new Promise<void>((resolve) => {
        for (let i = 0; i < 50; i++) setTimeout(() => sender.publish(`turn.${i}`, String(i)), 0);
        setTimeout(resolve, 0);
      });
      await sender.flush();
      await sub.closed;
      expect(got).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
      // The publishes, then flush's PING: at most a few writes, where one per callback would be 51.
      expect(writes()).toBeLessThanOrEqual(3);
    } finally {
      await Promise.all([sender.close(), receiver.close()]);
    }
  });

  it('writes what is queued before close() destroys the socket', async () => {
    await using nats = await startTestNats();
    const [sender, receiver] = [await connectNats(nats.url, 'sender'), await connectNats(nats.url, 'receiver')];
    try {
      const sub = receiver.subscribe('last.words', { max: 1, timeout: 5_000 });
      await receiver.flush();
      sender.publish('last.words', 'sent just before close');
      await sender.close();
      for await (const msg of sub) expect(msg.string()).toBe('sent just before close');
    } finally {
      await receiver.close();
    }
  });

  it('answers requests as before', async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'echo');
    try {
      nc.subscribe('echo', { callback: (_err, msg) => void msg.respond(msg.data) });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => nc.request('echo', String(i), { timeout: 2_000 })));
      expect(answers.map((m) => m.string())).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    } finally {
      await nc.close();
    }
  });
});
