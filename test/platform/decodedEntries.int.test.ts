import { randomBytes } from 'node:crypto';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { EventHeaders, EventMac } from '../../services/platform/eventStore/eventMac.ts';
import { EventStore, type RawLogMessage } from '../../services/platform/eventStore/eventStore.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
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
  it('hands every reader the entry verified first, and never bytes that only borrowed its sequence and MAC header', async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-decoded-');
    const config = loadConfig({}, { dataDir: dir.path, natsUrl: nats.url, natsAuth: 'none', logLevel: 'silent' });
    const nc = await connectNats(nats.url, 'decoded-entries');
    try {
      await ensureStreams(nc, config);
      const store = await EventStore.open(nc, new EventMac(randomBytes(32)));
      const subject = 'bc.evt.site.site.dc1';
      const { seq } = await store.append(subject, batch('Paris'), { expectedSeq: 0, msgId: 'c-paris' });

      // A consumer and a direct get meet the same message: one verification and parse, one entry.
      const first = store.decode(await rawAt(store, seq));
      const last = await store.lastEntry(subject);
      expect(first.batch?.events[0]?.data).toMatchObject({ name: 'Paris' });
      expect(last?.held === false && last.entry).toBe(first);
      expect(await store.readAt(seq)).toBe(first);

      // The same sequence and MAC header over other bytes yields the genuine entry, never those bytes; to a process
      // that did not decode the message, they are what they are: forged.
      const stored = await rawAt(store, seq);
      const altered = Buffer.from(stored.data);
      altered[altered.indexOf('Paris')] = 'B'.charCodeAt(0);
      expect(store.decode({ ...stored, data: altered })).toBe(first);
      const elsewhere = await EventStore.open(nc, store.mac);
      expect(elsewhere.decode({ ...stored, data: altered })).toMatchObject({ seq, rejection: { reason: 'MAC_INVALID' } });
      expect(elsewhere.decode(stored).batch?.events[0]?.data).toMatchObject({ name: 'Paris' });
      // Under another subject the header is checked afresh, and refused.
      expect(store.decode({ ...stored, subject: 'bc.evt.site.site.dc2' })).toMatchObject({ rejection: { reason: 'MAC_INVALID' } });
      // A message without the event store's MAC is never taken for the remembered one.
      const bare = { ...stored, headers: headers() };
      bare.headers.set(EventHeaders.messageId, stored.headers!.get(EventHeaders.messageId));
      expect(store.decode(bare)).toMatchObject({ rejection: { reason: 'MAC_MISSING' } });
      // And the genuine message still decodes to the entry it did.
      expect(store.decode(await rawAt(store, seq))).toBe(first);
    } finally {
      await nc.close();
    }
  });
});
