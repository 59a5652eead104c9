import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { EventMac } from '../../services/platform/eventStore/eventMac.ts';
import { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';
import { startTestCluster } from '../support/natsCluster.ts';
import { tempDir } from '../support/natsServer.ts';

const batch = (commandId: string, name: string): EventBatch => ({
  events: [{ type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name, provisioningCidrs: [] }, metadata: siteEventMetadata(commandId, 'dc1') }],
});

/** Leader reads (`STREAM.MSG.GET` on nats-server 2.9) answer what direct gets answer, next-by-subject included. */
describe('reads at the stream leader on a 3-node cluster', () => {
  it('answer the last message, the messages after a sequence and a message by sequence, as the replicas do once current', { timeout: 120_000 }, async () => {
    await using cluster = await startTestCluster();
    using dir = tempDir('bc-leader-reads-');
    const config = loadConfig({}, { dataDir: dir.path, natsUrl: cluster.url, natsAuth: 'none', streamReplicas: 3, logLevel: 'silent' });
    const nc = await connectNats(cluster.url, 'leader-reads');
    try {
      await ensureStreams(nc, config);
      const store = await EventStore.open(nc, new EventMac(randomBytes(32)), { replicas: 3 });
      expect(store.readsMayLag).toBe(true);
      const subject = 'bc.evt.site.site.dc1';
      // Another subject's messages in between: next-by-subject has to skip them.
      const expected = { [subject]: 0, 'bc.evt.site.site.other': 0 };
      for (const [i, name] of ['one', 'two', 'three'].entries()) {
        for (const s of [subject, 'bc.evt.site.site.other'] as const) {
          expected[s] = (
            await store.append(s, batch(`${s}-${i}`, s === subject ? name : `other ${name}`), { expectedSeq: expected[s], msgId: `${s}-${i}` })
          ).seq;
        }
      }

      const last = await store.lastEntry(subject, undefined, 'leader');
      expect(last).toMatchObject({ seq: expected[subject], held: false, previousSeq: expected[subject] - 2 });
      expect(last?.held === false && last.entry.batch?.events[0]?.data).toMatchObject({ name: 'three' });
      const names = async (from: 'leader' | 'replica') => {
        const out: string[] = [];
        for await (const e of store.entriesAfter(subject, 0, Infinity, from)) out.push((e.batch?.events[0]?.data as { name: string }).name);
        return out;
      };
      expect(await names('leader')).toEqual(['one', 'two', 'three']);
      // The walk back from the last message's predecessor, by exact gets at the leader.
      const walked: string[] = [];
      for await (const e of store.entriesEndingAt(subject, 0, last?.held === false ? last.previousSeq! : 0, 'leader'))
        walked.push((e.batch?.events[0]?.data as { name: string }).name);
      expect(walked).toEqual(['one', 'two']);
      expect((await store.readAt(expected[subject], 'leader'))?.subject).toBe(subject);
      expect(await store.readAt(expected[subject] + 100, 'leader')).toBeUndefined();
      expect(await store.lastEntry('bc.evt.site.site.none', undefined, 'leader')).toBeUndefined();
      // The replicas agree once current (every append above was acknowledged by a quorum).
      for (let i = 0; (await names('replica')).length < 3 && i < 50; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await names('replica')).toEqual(['one', 'two', 'three']);
    } finally {
      await nc.close();
    }
  });
});
