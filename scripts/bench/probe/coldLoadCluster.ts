/**
 * Probe: an aggregate's events by direct gets (one per event) against one filtered push consumer (`replaySubject`)
 * on a 3-node cluster with an R3 events stream, where an ephemeral consumer is placed through the meta leader.
 * `[N=100] npx tsx scripts/bench/probe/coldLoadCluster.ts`
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../services/platform/config.ts';
import { EventMac } from '../../../services/platform/eventStore/eventMac.ts';
import { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { replaySubject } from '../../../services/platform/eventStore/subjectReplay.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { startNatsCluster } from '../../../services/stack/natsCluster.ts';
import { maintenanceBatch } from '../payloads.ts';

const root = mkdtempSync(join(tmpdir(), 'bc-probe-cluster-'));
const cluster = await startNatsCluster({ dir: join(root, 'cluster') });
const nc = await connectNats(cluster.url, 'probe');
try {
  const config = loadConfig({}, { dataDir: root, natsUrl: cluster.url, natsAuth: 'none', streamReplicas: 3, logLevel: 'silent' });
  await ensureStreams(nc, config);
  const store = await EventStore.open(nc, new EventMac(randomBytes(32)), { replicas: 3 });
  const lengths = [4, 100];
  const last: Record<string, number> = {};
  for (let round = 0; round < 100; round++)
    for (const n of lengths)
      if (round < n) {
        const s = `bc.evt.metal.node.agg${n}`;
        last[s] = (await store.append(s, maintenanceBatch(`agg${n}`, `c${n}-${round}`, round), { expectedSeq: last[s] ?? 0, msgId: `c${n}-${round}` })).seq;
      }
  const n = Number(process.env.N ?? 100);
  const time = async (name: string, op: () => Promise<number>) => {
    for (let i = 0; i < 10; i++) await op();
    const t = performance.now();
    let got = 0;
    for (let i = 0; i < n; i++) got = await op();
    console.log(`${name.padEnd(40)} ${((performance.now() - t) / n).toFixed(3)} ms  (${got} msgs)`);
  };
  for (const len of lengths) {
    const s = `bc.evt.metal.node.agg${len}`;
    await time(`direct gets, ${len} events`, async () => {
      let c = 0;
      for await (const _ of store.directEntriesAfter(s, 0)) c++;
      return c;
    });
    await time(`replay, ${len} events`, async () => {
      let c = 0;
      for await (const m of replaySubject(nc, store.stream, s, 0)) c += store.decode(m).seq > 0 ? 1 : 0;
      return c;
    });
  }
} finally {
  await nc.close();
  await cluster.stop();
  rmSync(root, { recursive: true, force: true });
}
