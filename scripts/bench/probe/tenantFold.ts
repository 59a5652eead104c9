/**
 * Probe: CPU per event of the VPS tenant aggregate's fold (issue 34), this tree's `evolve` against another checkout's
 * (`BENCH_BASE_DIR`, e.g. a worktree of main), alternating rounds in one process. A round folds a tenant's life as the
 * VPS bench gives it, `TenantCreated` then `n` `InstanceRequested` then a `QuotaUsed` for each, from the initial state
 * (the events are built before the timing). A fold that copies the tenant's instance map per event costs O(n) per
 * event; a persistent map O(log n).
 * `BENCH_BASE_DIR=/work/wt/main-base npx tsx scripts/bench/probe/tenantFold.ts [instances,...] [rounds] [out.json]`:
 * medians per fold and size, every round's figures and the reference work (sampled between rounds) go to the file.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { TenantEvent } from '../../../schemas/vps/events.ts';
import { tenantAggregate } from '../../../services/vps/tenant/tenant.ts';
import { referenceMicrosPerItem, summariseReferenceWork } from '../referenceWork.ts';
import { machineInfo } from '../report.ts';

type Fold = Pick<typeof tenantAggregate, 'initialState' | 'evolve'>;
const sizes = (process.argv[2] ?? '2000,8000').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 4);
const out = process.argv[4];
const variants: { name: string; fold: Fold }[] = [{ name: 'this tree', fold: tenantAggregate }];
const base = process.env.BENCH_BASE_DIR;
if (base) {
  // The base's own module graph: its defineAggregate registry is not this tree's, so `vps.tenant` is defined once in each.
  const baseTenant = (await import(join(base, 'services/vps/tenant/tenant.ts'))) as { tenantAggregate: Fold };
  variants.unshift({ name: `base ${base}`, fold: baseTenant.tenantAggregate });
}

/** A tenant's life in the VPS bench: created, `n` instances requested, each then counted as used. */
function lifeOf(n: number): TenantEvent[] {
  const resources = { instances: 1, vcpus: 1, memoryMib: 1_024, diskGib: 20 };
  const ids = Array.from({ length: n }, (_, i) => `vm-${i.toString(36).padStart(6, '0')}`);
  return [
    { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } },
    ...ids.map((instanceId): TenantEvent => ({
      type: 'InstanceRequested',
      data: {
        tenantId: 't1',
        instanceId,
        poolId: 'p1',
        flavorId: 'small',
        image: 'ubuntu-24.04',
        sshKeys: [],
        userData: null,
        resources,
        requestedAt: '2026-12-07T12:00:00.000Z',
      },
    })),
    ...ids.map((instanceId): TenantEvent => ({ type: 'QuotaUsed', data: { tenantId: 't1', instanceId } })),
  ];
}

/** CPU µs per event of folding `events` from the initial state; the final state is checked so the fold is not skipped. */
function round(fold: Fold, events: readonly TenantEvent[], n: number): number {
  const before = process.cpuUsage();
  let state = fold.initialState;
  for (const event of events) state = fold.evolve(state, event);
  const used = process.cpuUsage(before);
  if (!state.exists || state.usage.used.instances !== n) throw new Error(`the fold of ${n} instances did not count them all`);
  return (used.user + used.system) / events.length;
}

const lives = new Map(sizes.map((n) => [n, lifeOf(n)]));
for (const v of variants) round(v.fold, lifeOf(500), 500);
const samples = new Map<string, number[]>();
const load0 = loadavg()[0]!;
const reference = [referenceMicrosPerItem()];
for (let r = 0; r < rounds; r++) {
  // The first variant of each round alternates, so neither always runs in the other's wake (or its garbage).
  const order = r % 2 === 0 ? variants : [...variants].reverse();
  for (const n of sizes) for (const v of order) samples.set(`${v.name} n=${n}`, [...(samples.get(`${v.name} n=${n}`) ?? []), round(v.fold, lives.get(n)!, n)]);
  reference.push(referenceMicrosPerItem());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${rounds} rounds, load average ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`);
for (const [name, s] of samples) console.log(`${name.padEnd(36)} CPU µs/event median ${median(s).toFixed(2)} (${s.map((x) => x.toFixed(2)).join(', ')})`);
const referenceWork = summariseReferenceWork(reference);
console.log(`reference work ${referenceWork.microsPerItem.median} µs per item (${referenceWork.microsPerItem.min}-${referenceWork.microsPerItem.max})`);
if (out) {
  const folds = Object.fromEntries([...samples].map(([name, s]) => [name, { cpuMicrosPerEvent: median(s), rounds: s }]));
  const result = { date: new Date().toISOString(), instances: sizes, machine: machineInfo('not used', Math.round(load0 * 100) / 100, referenceWork), ...folds };
  writeFileSync(resolve(out), `${JSON.stringify(result, null, 2)}\n`);
}
