import { setImmediate as turnEnd, setTimeout as sleep } from 'node:timers/promises';
import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { ACK_DELAY_MS } from '../../services/platform/nats/coalescedWrites.ts';
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

  it('lets an ack queued alone wait up to ACK_DELAY_MS, and sends one queued with other bytes along with them', async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'acker');
    try {
      const alone = await pendingMessage(nc, 'alone');
      const writes = countWrites(nc);
      alone.ack();
      await turnEnd();
      expect(writes()).toBe(0);
      await sleep(ACK_DELAY_MS * 3);
      expect(writes()).toBe(1);
      expect(await ackPending(nc, 'alone')).toBe(0);

      const accompanied = await pendingMessage(nc, 'accompanied');
      const before = writes();
      accompanied.ack();
      nc.publish('elsewhere', 'a reply or an append');
      await turnEnd();
      // Both went in the turn's write; the consumer-info request below is the next one.
      expect(writes() - before).toBe(1);
      expect(await ackPending(nc, 'accompanied')).toBe(0);
    } finally {
      await nc.close();
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

/** One message of a fresh stream, delivered to a durable consumer with explicit acks and not acked yet. */
async function pendingMessage(nc: NatsConnection, name: string): Promise<JsMsg> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name, subjects: [`${name}.>`] });
  await jetstream(nc).publish(`${name}.one`, 'one');
  await jsm.consumers.add(name, { durable_name: name, ack_policy: AckPolicy.Explicit, ack_wait: 60_000_000_000 });
  const msg = await (await jetstream(nc).consumers.get(name, name)).next({ expires: 5_000 });
  if (!msg) throw new Error(`no message on ${name}`);
  // What the fetch still queued (its inbox's unsubscription) goes out now, not with the ack under test.
  await nc.flush();
  return msg;
}

async function ackPending(nc: NatsConnection, name: string): Promise<number> {
  return (await (await jetstreamManager(nc)).consumers.info(name, name)).num_ack_pending;
}
