/**
 * Probe: the backbone bench's append-vs-raw ratio for this tree's store and another checkout's (`BENCH_BASE_DIR`),
 * in one process on one server: each round runs raw `js.publish` (`measureRawPublish`), the base store's appends and
 * this tree's (`measureEventStoreAppend`), one after another, so every append figure has a raw figure from the same
 * minute to be divided by. Prints each round's rates, the bench process's user and system CPU per item and the
 * nats-server's, then the ratios to raw per round and of the medians.
 * `BENCH_BASE_DIR=/work/wt/main-base npx tsx scripts/bench/probe/appendVsRaw.ts [items per measurement] [rounds]`
 */
import { join } from 'node:path';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import type { loadEventMac } from '../../../services/platform/eventStore/eventMac.ts';
import { meterProcess, natsServerPid } from '../cpuMeter.ts';
import type { Figure } from '../figure.ts';
import { measureEventStoreAppend } from '../measure/eventStoreAppend.ts';
import { measureRawPublish } from '../measure/rawPublish.ts';
import { openProbeStore } from './probeStore.ts';

const count = Number(process.argv[2] ?? 30_000);
const rounds = Number(process.argv[3] ?? 8);
const base = process.env.BENCH_BASE_DIR;
if (!base) throw new Error('BENCH_BASE_DIR must name the checkout to compare with');
const { nc, config, store, close } = await openProbeStore();
meterProcess('nats', natsServerPid(join(config.dataDir, 'nats')));
const baseStore = (await import(join(base, 'services/platform/eventStore/eventStore.ts'))) as { EventStore: typeof EventStore };
const baseMac = (await import(join(base, 'services/platform/eventStore/eventMac.ts'))) as { loadEventMac: typeof loadEventMac };
const old = await baseStore.EventStore.open(nc, baseMac.loadEventMac(config));

type Sample = { rate: number; userUs: number; systemUs: number; natsUs: number };
const samples: Record<'raw' | 'base' | 'this tree', Sample[]> = { raw: [], base: [], 'this tree': [] };
for (let r = 0; r < rounds; r++) {
  const warmup = r === 0 ? 3_000 : 0;
  const runs: [keyof typeof samples, () => Promise<Figure>][] = [
    ['raw', () => measureRawPublish(nc, { count, warmup, inFlight: 256 })],
    ['base', () => measureEventStoreAppend(old, { count, warmup, inFlight: 256, aggregates: 10_000 })],
    ['this tree', () => measureEventStoreAppend(store, { count, warmup, inFlight: 256, aggregates: 10_000 })],
  ];
  // The two stores take turns at going first after raw, so neither always runs in the other's wake.
  if (r % 2 === 1) runs.push(runs.splice(1, 1)[0]!);
  for (const [name, run] of runs) {
    const cpu = process.cpuUsage();
    const f = await run();
    const used = process.cpuUsage(cpu);
    samples[name].push({ rate: f.rate, userUs: used.user / count, systemUs: used.system / count, natsUs: ((f.cpu.nats ?? 0) * 1e6) / count });
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, s] of Object.entries(samples)) {
  const rows = s.map((x) => `${Math.round(x.rate)}/s u${x.userUs.toFixed(1)} s${x.systemUs.toFixed(1)} nats ${x.natsUs.toFixed(1)}`);
  console.log(`${name.padEnd(10)} ${rows.join(' | ')}`);
}
const rates = (name: keyof typeof samples) => samples[name].map((x) => x.rate);
for (const name of ['base', 'this tree'] as const) {
  const perRound = rates(name).map((x, i) => x / rates('raw')[i]!);
  console.log(
    `${name.padEnd(10)} ratio to raw per round ${perRound.map((x) => x.toFixed(2)).join(' ')} (median ${median(perRound).toFixed(2)}); of the medians ${(median(rates(name)) / median(rates('raw'))).toFixed(2)}; bench CPU median ${median(samples[name].map((x) => x.userUs + x.systemUs)).toFixed(1)} µs against raw's ${median(samples.raw.map((x) => x.userUs + x.systemUs)).toFixed(1)}`,
  );
}
await close();
