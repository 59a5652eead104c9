import { randomBytes } from 'node:crypto';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { EventHeaders, EventMac } from '../../services/platform/eventStore/eventMac.ts';
import { deliveredHeaderBlock } from '../../services/platform/eventStore/eventHeaderValues.ts';
import { EventStore, type RawLogMessage } from '../../services/platform/eventStore/eventStore.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { deliveredStreamSequence } from '../../services/platform/nats/deliveredSequence.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';

const batch = (name: string): EventBatch => ({
  events: [{ type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name, provisioningCidrs: [] }, metadata: siteEventMetadata(`c-${name}`, 'dc1') }],
});

/** The stored message at `seq` as a consumer would hand it to `decode`, with its payload optionally replaced. */
async function rawAt(store: EventStore, seq: number, data?: Uint8Array): Promise<RawLogMessage> {
  const msg = await store.jsm.direct.getMessage(store.stream, { seq });
  if (!msg) throw new Error(`no message at ${seq}`);
  const hdrs = headers();
  for (const key of msg.header.keys()) hdrs.set(key, msg.header.get(key));
  return { seq: msg.seq, subject: msg.subject, headers: hdrs, data: data ?? msg.data };
}

describe('decoding a message the process decoded already', () => {
  it("EventStore.decode verifies every message afresh: bytes that borrow a decoded message's sequence and MAC header are refused", async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-decoded-');
    const config = loadConfig({}, { dataDir: dir.path, natsUrl: nats.url, natsAuth: 'none', logLevel: 'silent' });
    const nc = await connectNats(nats.url, 'decoded-entries');
    try {
      await ensureStreams(nc, config);
      const store = await EventStore.open(nc, new EventMac(randomBytes(32)));
      const subject = 'bc.evt.site.site.dc1';
      const { seq } = await store.append(subject, batch('Paris'), { expectedSeq: 0, msgId: 'c-paris' });

      // A consumer and a direct get meet the same message and read the same batch.
      const first = store.decode(await rawAt(store, seq));
      const last = await store.lastEntry(subject);
      expect(first.batch?.events[0]?.data).toMatchObject({ name: 'Paris' });
      expect(last?.held === false && last.entry).toEqual(first);
      expect(await store.readAt(seq)).toEqual(first);

      // The same sequence and MAC header over other bytes is forged, even right after the genuine message.
      const stored = await rawAt(store, seq);
      const altered = Buffer.from(stored.data);
      altered[altered.indexOf('Paris')] = 'B'.charCodeAt(0);
      expect(store.decode({ ...stored, data: altered })).toMatchObject({ seq, rejection: { reason: 'MAC_INVALID' } });
      // Under another subject the header is refused.
      expect(store.decode({ ...stored, subject: 'bc.evt.site.site.dc2' })).toMatchObject({ rejection: { reason: 'MAC_INVALID' } });
      // A message without the event store's MAC is refused as such.
      const bare = { ...stored, headers: headers() };
      bare.headers.set(EventHeaders.messageId, stored.headers!.get(EventHeaders.messageId));
      expect(store.decode(bare)).toMatchObject({ rejection: { reason: 'MAC_MISSING' } });
      // And the genuine message still decodes to the batch it did.
      expect(store.decode(await rawAt(store, seq))).toEqual(first);
    } finally {
      await nc.close();
    }
  });

  it('EventStore.decode reads a consumer-delivered message from its header bytes (nats.js still keeps them) and its sequence from the ack subject, and decodes it as a direct get does', async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-delivered-');
    const config = loadConfig({}, { dataDir: dir.path, natsUrl: nats.url, natsAuth: 'none', logLevel: 'silent' });
    const nc = await connectNats(nats.url, 'delivered-entries');
    try {
      await ensureStreams(nc, config);
      const store = await EventStore.open(nc, new EventMac(randomBytes(32)));
      const subject = 'bc.evt.site.site.dc1';
      const first = await store.append(subject, batch('Paris'), { expectedSeq: 0, msgId: 'c-paris' });
      const second = await store.append(subject, batch('Lyon'), { expectedSeq: first.seq, msgId: 'c-lyon', position: 2 });
      const consumer = await store.js.consumers.get(store.stream, { filter_subjects: subject });
      const messages = await consumer.consume({ max_messages: 10 });
      const seen = [];
      for await (const m of messages) {
        // Upgrading nats.js past the shape this relies on fails here, rather than quietly taking the slow path.
        expect(deliveredHeaderBlock(m)).toBeDefined();
        // Read from the ack subject before nats.js parses it: the same number its own parse gives.
        expect(typeof (m as { reply?: unknown }).reply).toBe('string');
        const seq = deliveredStreamSequence(m);
        expect(seq).toBe(m.info.streamSequence);
        seen.push(store.decode(m, seq));
        if (m.seq === second.seq) break;
      }
      await messages.close();
      expect(seen).toEqual([await store.readAt(first.seq), await store.readAt(second.seq)]);
      expect(seen[1]).toMatchObject({ position: 2, batch: { events: [{ data: { name: 'Lyon' } }] } });
    } finally {
      await nc.close();
    }
  });
});
