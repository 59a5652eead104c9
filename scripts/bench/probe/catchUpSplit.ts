/**
 * Probe: where a projector's catch-up CPU goes, stage by stage, on the consumer path the projectors use (a durable
 * `consume()`, one AckAll per 1,000 messages) over a filled stream. Each stage adds one step of the product's path to
 * the one before: reading the log alone, the event-store headers, the MAC, `JSON.parse`, `EventStore.decode` whole,
 * `projectEntry` (the catalog's read of each event), and `applyBatch` with the nodes projection into SQLite. The
 * difference between two stages is what that step costs per event; GC time (from `gc` performance entries) is given
 * per stage too. Stages run in a rotating order each round.
 * `npx tsx scripts/bench/probe/catchUpSplit.ts [--events 100000] [--rounds 2] [--batch 1000] [--stages TEXT]`: `--batch`, the
 * messages applied per transaction and acked at once; `--stages`, only the stages whose name holds TEXT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nodesProjection } from '../../../projections/nodes/projector.ts';
import { openWriter } from '../../../projections/runtime/readModelDatabase.ts';
import { Streams, Subjects } from '../../../schemas/subjects.ts';
import { eventHeaderValues } from '../../../services/platform/eventStore/eventHeaderValues.ts';
import { applyBatch, projectEntry } from '../../../services/projectors/applyBatch.ts';
import { natsServerPid, processCpuSeconds } from '../cpuMeter.ts';
import { fastFillEvents } from '../fastFill.ts';
import { fillMessage } from '../payloads.ts';
import { referenceMicrosPerItem } from '../referenceWork.ts';
import { openProbeStore } from './probeStore.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    batch: { type: 'string', default: '1000' },
    stages: { type: 'string', default: '' },
  },
});
const events = Number(values.events);
const BATCH = Number(values.batch);
const decoder = new TextDecoder();
const { server, store, close } = await openProbeStore();
const natsPid = natsServerPid(server.storeDir);
const dir = mkdtempSync(join(tmpdir(), 'bc-catch-up-split-'));

/** What a stage does with each batch of delivered messages before the batch is acked; returns something to keep. */
type Stage = (batch: readonly JsMsg[]) => number;
let files = 0;
const stages: Record<string, () => Stage> = {
  'log only (consume, seq, AckAll)': () => (b) => b.length,
  '+ headers': () => (b) => b.reduce((n, m) => n + eventHeaderValues(m).mac.length, 0),
  '+ MAC': () => (b) =>
    b.reduce((n, m) => {
      const v = eventHeaderValues(m);
      return n + (store.mac.verifyValues(m.subject, v.mac, v.messageId, v.expectedSeq, m.data, v.position, v.state) ? 0 : 1);
    }, 0),
  '+ JSON.parse': () => (b) =>
    b.reduce((n, m) => {
      const v = eventHeaderValues(m);
      const bad = store.mac.verifyValues(m.subject, v.mac, v.messageId, v.expectedSeq, m.data, v.position, v.state);
      return n + (bad ? 0 : (JSON.parse(decoder.decode(m.data)) as { events: unknown[] }).events.length);
    }, 0),
  '+ envelope (decode)': () => (b) => b.reduce((n, m) => n + (store.decode(m).batch?.events.length ?? 0), 0),
  '+ catalog (projectEntry)': () => (b) => b.reduce((n, m) => n + projectEntry(store.decode(m)).message.events.length, 0),
  '+ apply (applyBatch, nodes)': () => {
    const db = openWriter(join(dir, `nodes-${files++}.db`), nodesProjection);
    return (b) => {
      applyBatch(
        db,
        nodesProjection,
        b.map((m) => projectEntry(store.decode(m)).message),
      );
      return b.length;
    };
  },
};

async function run(name: string, stage: Stage, lastSeq: number) {
  const durable = `split_${Math.random().toString(36).slice(2)}`;
  await store.jsm.consumers.add(Streams.events.name, {
    durable_name: durable,
    filter_subject: Subjects.allEvents,
    ack_policy: AckPolicy.All,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 30_000_000_000,
    max_ack_pending: 20_000,
  });
  const consumer = await store.js.consumers.get(Streams.events.name, durable);
  let gcMs = 0;
  const observer = new PerformanceObserver((list) => list.getEntries().forEach((e) => (gcMs += e.duration)));
  observer.observe({ entryTypes: ['gc'] });
  const natsBefore = natsPid === undefined ? undefined : processCpuSeconds(natsPid);
  const before = process.cpuUsage();
  const started = performance.now();
  let sink = 0;
  await new Promise<void>((resolve) => {
    let pending: JsMsg[] = [];
    void consumer.consume({
      max_messages: 2_000,
      callback: (m) => {
        pending.push(m);
        const last = m.seq >= lastSeq;
        if (last || pending.length >= BATCH) {
          sink += stage(pending);
          pending.at(-1)!.ack();
          pending = [];
        }
        if (last) resolve();
      },
    });
  });
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  const natsAfter = natsPid === undefined ? undefined : processCpuSeconds(natsPid);
  await new Promise((r) => setTimeout(r, 50));
  observer.disconnect();
  await store.jsm.consumers.delete(Streams.events.name, durable);
  if (sink === 0) throw new Error(`${name}: nothing read`);
  return {
    cpu: (used.user + used.system) / events,
    gc: (gcMs * 1000) / events,
    nats: natsBefore === undefined || natsAfter === undefined ? NaN : ((natsAfter - natsBefore) * 1e6) / events,
    rate: events / (wallMs / 1000),
  };
}

try {
  const fill = await fastFillEvents(store, 0, events, fillMessage);
  const names = Object.keys(stages).filter((n) => n.includes(values.stages));
  const results = new Map(names.map((n) => [n, [] as Awaited<ReturnType<typeof run>>[]]));
  const load = [loadavg()[0]!];
  const reference = [referenceMicrosPerItem()];
  // One unmeasured pass warms every stage's code.
  await run('warm-up', stages['+ apply (applyBatch, nodes)']!(), fill.lastSeq);
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) results.get(name)!.push(await run(name, stages[name]!(), fill.lastSeq));
  }
  load.push(loadavg()[0]!);
  reference.push(referenceMicrosPerItem());
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${events.toLocaleString('en-US')} events, ${values.rounds} rounds, batches of ${BATCH}; load average ${load.map((l) => l.toFixed(1)).join(' -> ')}, reference work ${reference.map((r) => r.toFixed(0)).join(' / ')} µs`,
  );
  console.log(`${'stage'.padEnd(34)} ${'cpu µs/ev'.padStart(10)} ${'of it GC'.padStart(9)} ${'nats µs/ev'.padStart(11)} ${'events/s'.padStart(9)}`);
  for (const [name, rs] of results) {
    const f = (k: 'cpu' | 'gc' | 'nats') => median(rs.map((r) => r[k])).toFixed(1);
    console.log(
      `${name.padEnd(34)} ${f('cpu').padStart(10)} ${f('gc').padStart(9)} ${f('nats').padStart(11)} ${Math.round(median(rs.map((r) => r.rate)))
        .toString()
        .padStart(9)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await close();
}
