/**
 * Probe: CPU per `EventStore.append` (bench process and nats-server), this tree's store against another checkout's
 * (`BENCH_BASE_DIR`, e.g. a worktree of main), alternating rounds on one server, the batches built before the timing so
 * only the append is counted. Appends as the backbone bench's `eventStoreAppend` does: 10,000 aggregates, 256 in
 * flight, never two on one aggregate, with expected sequence, message id and position.
 * `BENCH_BASE_DIR=/work/wt/main-base npx tsx scripts/bench/probe/appendCost.ts [appends per round] [rounds] [out.json]`: medians
 * per store, every round's figures and the reference work (sampled between rounds, never during one) go to the file.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import type { EventBatch } from '../../../schemas/envelope.ts';
import { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { loadEventMac } from '../../../services/platform/eventStore/eventMac.ts';
import { cpuMeter, natsServerPid } from '../cpuMeter.ts';
import { maintenanceBatch } from '../payloads.ts';
import { pipelined } from '../pipeline.ts';
import { referenceMicrosPerItem, summariseReferenceWork } from '../referenceWork.ts';
import { machineInfo } from '../report.ts';
import { openProbeStore } from './probeStore.ts';

type Append = Pick<EventStore, 'append'>;
const count = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 4);
const out = process.argv[4];
const AGGS = 10_000;
const { nc, config, store, close, server } = await openProbeStore();
const pid = natsServerPid(join(config.dataDir, 'nats'));
const variants: { name: string; store: Append }[] = [{ name: 'this tree', store }];
const base = process.env.BENCH_BASE_DIR;
if (base) {
  const baseStore = (await import(join(base, 'services/platform/eventStore/eventStore.ts'))) as { EventStore: typeof EventStore };
  const baseMac = (await import(join(base, 'services/platform/eventStore/eventMac.ts'))) as { loadEventMac: typeof loadEventMac };
  variants.unshift({ name: `base ${base}`, store: await baseStore.EventStore.open(nc, baseMac.loadEventMac(config)) });
}
void server;

let runs = 0;
/** One round of `n` appends on fresh aggregates, the batches and message ids made first. */
async function round(target: Append, n: number): Promise<{ benchUs: number; natsUs: number; rate: number }> {
  const prefix = `r${(++runs).toString(36)}`;
  const msgIds = Array.from({ length: n }, (_, i) => `${prefix}-${i.toString(36).padStart(8, '0')}`);
  const batches: EventBatch[] = msgIds.map((msgId, i) => maintenanceBatch(`${prefix}-${i % AGGS}`, msgId, i));
  const tails = new Array<Promise<number> | undefined>(AGGS);
  const lengths = new Array<number>(AGGS).fill(0);
  const append = (i: number) => {
    const agg = i % AGGS;
    const position = ++lengths[agg]!;
    const tail = (tails[agg] ?? Promise.resolve(0)).then(async (expectedSeq) => {
      const ack = await target.append(`bc.evt.bench.agg.${prefix}-${agg}`, batches[i]!, { expectedSeq, msgId: msgIds[i]!, position });
      return ack.seq;
    });
    tails[agg] = tail;
    return tail;
  };
  const cpu = cpuMeter({ nats: pid });
  const start = performance.now();
  await pipelined(n, 256, append);
  const seconds = (performance.now() - start) / 1000;
  const used = cpu();
  return { benchUs: (used.bench! * 1e6) / n, natsUs: ((used.nats ?? 0) * 1e6) / n, rate: n / seconds };
}

for (const v of variants) await round(v.store, 2_000);
const samples = new Map<string, { benchUs: number; natsUs: number; rate: number }[]>();
const load0 = loadavg()[0]!;
const reference = [referenceMicrosPerItem()];
for (let r = 0; r < rounds; r++) {
  // The first variant of each round alternates, so neither always runs in the other's wake.
  const order = r % 2 === 0 ? variants : [...variants].reverse();
  for (const v of order) samples.set(v.name, [...(samples.get(v.name) ?? []), await round(v.store, count)]);
  reference.push(referenceMicrosPerItem());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${count} appends per round, ${rounds} rounds, load average ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`);
for (const [name, s] of samples) {
  const line = (k: 'benchUs' | 'natsUs') => s.map((x) => x[k].toFixed(1)).join(', ');
  console.log(
    `${name.padEnd(28)} bench µs/append median ${median(s.map((x) => x.benchUs)).toFixed(1)} (${line('benchUs')}); nats ${median(s.map((x) => x.natsUs)).toFixed(1)} (${line('natsUs')}); rate ${s.map((x) => Math.round(x.rate)).join(', ')}/s`,
  );
}
const referenceWork = summariseReferenceWork(reference);
console.log(`reference work ${referenceWork.microsPerItem.median} µs per item (${referenceWork.microsPerItem.min}-${referenceWork.microsPerItem.max})`);
if (out) {
  const natsVersion = execFileSync(process.env.BC_NATS_SERVER_BIN ?? 'nats-server', ['--version'], { encoding: 'utf8' }).trim();
  const medians = Object.fromEntries(
    [...samples].map(([name, s]) => [
      name,
      {
        benchCpuMicrosPerAppend: median(s.map((x) => x.benchUs)),
        natsCpuMicrosPerAppend: median(s.map((x) => x.natsUs)),
        rate: median(s.map((x) => x.rate)),
        rounds: s,
      },
    ]),
  );
  const result = {
    date: new Date().toISOString(),
    appendsPerRound: count,
    machine: machineInfo(natsVersion, Math.round(load0 * 100) / 100, referenceWork),
    ...medians,
  };
  writeFileSync(resolve(out), `${JSON.stringify(result, null, 2)}\n`);
}
await close();
