/**
 * Probe: one aggregate's events by direct gets (one per event) against one filtered push consumer (`replaySubject`),
 * on a stream of `size` fill messages plus aggregates of 0, 1, 2, 4 and 100 events, interleaved with one another.
 * Then whole cold loads (`AggregateRepository.load`): the product's (the last message, whose position picks the walk
 * back by predecessor gets or one replay) against the walk back whatever the length (4 gets, then a replay: the read
 * before positions) and the last message and a replay of the rest (the read before the walk back).
 * Prints latency and CPU per read of this process and of the nats-server, and requests per load.
 * `[LENGTHS=0,1,2,4,100] [N=200] npx tsx scripts/bench/probe/coldLoad.ts [size]`
 */
import { Streams } from '../../../schemas/subjects.ts';
import { nodeAggregate } from '../../../services/metal/node/node.ts';
import { AggregateRepository } from '../../../services/platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { replaySubject } from '../../../services/platform/eventStore/subjectReplay.ts';
import { fastFillEvents } from '../fastFill.ts';
import { natsServerPid, processCpuSeconds } from '../cpuMeter.ts';
import { fillMessage, maintenanceBatch } from '../payloads.ts';
import { openProbeStore } from './probeStore.ts';

const size = Number(process.argv[2] ?? 100_000);
const { server, nc, store, close } = await openProbeStore();
if (size > 0) await fastFillEvents(store, 0, size, fillMessage);
const lengths = (process.env.LENGTHS ?? '0,1,2,4,100').split(',').map(Number);
const last: Record<string, number> = {};
for (let round = 0; round < 100; round++)
  for (const n of lengths)
    if (round < n) {
      const s = `bc.evt.metal.node.agg${n}`;
      last[s] = (
        await store.append(s, maintenanceBatch(`agg${n}`, `c${n}-${round}`, round), { expectedSeq: last[s] ?? 0, msgId: `c${n}-${round}`, position: round + 1 })
      ).seq;
    }
if (size > 0) await fastFillEvents(store, size, 1000, fillMessage).catch(() => undefined);

const time = async (name: string, n: number, op: () => Promise<number>) => {
  for (let i = 0; i < 20; i++) await op();
  const pid = natsServerPid(server.storeDir);
  const n0 = processCpuSeconds(pid!)!;
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  let got = 0;
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    got = await op();
    ms.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpu0);
  const p50 = ms.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  console.log(
    `${name.padEnd(40)} ${((performance.now() - t) / n).toFixed(3)} ms (p50 ${p50.toFixed(3)})  cpu ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms nats ${(((processCpuSeconds(pid!)! - n0) * 1000) / n).toFixed(3)} ms  (${got} msgs)`,
  );
};
console.log(`stream of ${size.toLocaleString('en-US')} messages`);
for (const n of lengths) {
  const s = `bc.evt.metal.node.agg${n}`;
  await time(`direct gets, ${n} events`, Number(process.env.N ?? 200), async () => {
    let c = 0;
    for await (const e of store.directEntriesAfter(s, 0)) c += e.seq > 0 ? 1 : 0;
    return c;
  });
  await time(`replay, ${n} events`, Number(process.env.N ?? 200), async () => {
    let c = 0;
    for await (const m of replaySubject(nc, Streams.events.name, s, 0)) c += store.decode(m).seq > 0 ? 1 : 0;
    return c;
  });
}
/** The store as the repository read it before positions: the walk back whatever the aggregate's length. */
const walkWithoutPosition = {
  readsMayLag: store.readsMayLag,
  lastEntry: store.lastEntry.bind(store),
  entriesAfter: store.entriesAfter.bind(store),
  entriesEndingAt: (subject: string, afterSeq: number, endSeq: number) => store.entriesEndingAt(subject, afterSeq, endSeq),
} as unknown as EventStore;
/** The store as the repository read it before the walk back: what precedes the last message by `entriesAfter`. */
const replayAfterLast = {
  readsMayLag: store.readsMayLag,
  lastEntry: store.lastEntry.bind(store),
  entriesAfter: store.entriesAfter.bind(store),
  entriesEndingAt: store.entriesAfter.bind(store),
} as unknown as EventStore;
const request = nc.request.bind(nc);
let requests = 0;
nc.request = (...args) => {
  requests++;
  return request(...args);
};
for (const n of lengths) {
  for (const [name, reads] of [
    ['by position', store],
    ['walk back, no position', walkWithoutPosition],
    ['replay after last', replayAfterLast],
  ] as const) {
    requests = 0;
    await time(
      `load, ${name}, ${n} events`,
      Number(process.env.N ?? 200),
      async () => (await new AggregateRepository(reads).load(nodeAggregate, `agg${n}`)).seq,
    );
    console.log(`${''.padEnd(40)} ${(requests / (20 + Number(process.env.N ?? 200))).toFixed(2)} requests per load`);
  }
}
const info = await (await import('@nats-io/jetstream')).jetstreamManager(nc).then((j) => j.streams.info(Streams.events.name));
console.log('consumers left', info.state.consumer_count);
await new Promise((r) => setTimeout(r, 500));
const info2 = await (await import('@nats-io/jetstream')).jetstreamManager(nc).then((j) => j.streams.info(Streams.events.name));
console.log('consumers left after 0.5s', info2.state.consumer_count);
await close();
