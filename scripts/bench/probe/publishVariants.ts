/**
 * Probe: where the event store's append loses against raw `js.publish`. Runs publish variants one after another
 * on one server, each `count` messages at 256 in flight, and prints rate and CPU split (bench vs nats-server).
 * `npx tsx scripts/bench/probe/publishVariants.ts [count]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { loadConfig } from '../../../services/platform/config.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { startNatsServer } from '../../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { openEventStore } from '../../../services/stack/runtime.ts';
import { stopwatch } from '../figure.ts';
import { encodeBatch, maintenanceBatch } from '../payloads.ts';
import { pipelined } from '../pipeline.ts';
import { PipelinedAppender } from '../variants/pipelinedAppender.ts';
import { cpuMeter, natsServerPid } from '../cpuMeter.ts';

const count = Number(process.argv[2] ?? 50_000);
const AGGS = 10_000;
const root = mkdtempSync(join(tmpdir(), 'bc-probe-'));
const server = await startNatsServer({ storeDir: join(root, 'nats') });
const nc = await connectNats(server.url, 'probe');
const config = loadConfig({}, { dataDir: root, natsUrl: server.url });
await ensureStreams(nc, config);
const js = jetstream(nc);
const store = await openEventStore(nc, config);
const pid = natsServerPid(join(root, 'nats'));
const appender = new PipelinedAppender(nc);
const payload = encodeBatch(maintenanceBatch('n-1', 'c-00000001', 1));

const chained = (prefix: string, publish: (subject: string, i: number, expectedSeq: number) => Promise<number>) => {
  const tails: (Promise<number> | undefined)[] = [];
  return (i: number) => {
    const agg = i % AGGS;
    const t = (tails[agg] ?? Promise.resolve(0)).then((seq) => publish(`bc.evt.${prefix}.x.a${agg}`, i, seq));
    tails[agg] = t;
    return t;
  };
};
let run = 0;
const variants: Record<string, () => (i: number) => Promise<unknown>> = {
  'js.publish, fixed payload': () => (i) => js.publish(`bc.evt.p${run}.x.a${i % AGGS}`, payload),
  '+ JSON.stringify per message': () => (i) => js.publish(`bc.evt.p${run}.x.a${i % AGGS}`, encodeBatch(maintenanceBatch('n', `c${i}`, i))),
  '+ msgID': () => (i) => js.publish(`bc.evt.p${run}.x.a${i % AGGS}`, payload, { msgID: `p${run}-${i}` }),
  '+ expect (chained per aggregate)': () =>
    chained(`p${run}`, async (s, _i, seq) => (await js.publish(s, payload, { expect: { lastSubjectSequence: seq } })).seq),
  'msgID + expect (chained)': () =>
    chained(`p${run}`, async (s, i, seq) => (await js.publish(s, payload, { msgID: `p${run}-${i}`, expect: { lastSubjectSequence: seq } })).seq),
  'EventStore.append (chained)': () =>
    chained(`p${run}`, async (s, i, seq) => (await store.append(s, maintenanceBatch('n', `p${run}-${i}`, i), { expectedSeq: seq, msgId: `p${run}-${i}` })).seq),
  'variant: PipelinedAppender (chained)': () =>
    chained(
      `p${run}`,
      async (s, i, seq) => (await appender.append(s, maintenanceBatch('n', `p${run}-${i}`, i), { expectedSeq: seq, msgId: `p${run}-${i}` })).seq,
    ),
};
const rounds = Number(process.argv[3] ?? 2);
for (let r = 0; r < rounds; r++) {
  for (const [name, make] of Object.entries(variants)) {
    run++;
    await pipelined(2_000, 256, make());
    run++;
    const task = make();
    const cpu = cpuMeter({ nats: pid });
    const t = stopwatch();
    await pipelined(count, 256, task);
    const s = t();
    const c = cpu();
    console.log(
      `${name.padEnd(36)} ${Math.round(count / s)
        .toLocaleString('en-US')
        .padStart(7)}/s  cpu bench ${(c.bench! / s).toFixed(2)} nats ${((c.nats ?? 0) / s).toFixed(2)}`,
    );
  }
}
appender.close();
await nc.close();
await server.stop();
rmSync(root, { recursive: true, force: true });
