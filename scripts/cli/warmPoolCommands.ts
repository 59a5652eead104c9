import { InvalidArgumentError, type Command } from 'commander';
import type { PoolView } from '../../schemas/vps/views.ts';
import type { WarmFlavor } from '../../schemas/vps/warmPool.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;
type CommandOutcome = { seq: number; events: Array<{ type: string }> };

/**
 * One `--keep <flavorId>:<count>:<image>`: the image comes last and may itself hold colons (`registry:5000/debian:12`).
 * The API checks the rest (the flavor sold in the pool, at most 32 a flavor).
 */
export function warmFlavorOf(spec: string): WarmFlavor {
  const [flavorId, count, ...image] = spec.split(':');
  if (!flavorId || image.length === 0 || image.join(':') === '' || !/^\d+$/.test(count ?? ''))
    throw new InvalidArgumentError(`not <flavorId>:<count>:<image>: ${spec}`);
  return { flavorId, count: Number(count), image: image.join(':') };
}

const seconds = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`not a whole number of seconds: ${value}`);
  return Number(value);
};

/** A pool's warm slots in one cell: `small/ubuntu-24.04 2/3 ready (1 preparing)` per flavor and image. */
const warmCell = (warm: PoolView['warm']) =>
  (warm?.flavors ?? []).map((f) => `${f.flavorId}/${f.image} ${f.ready}/${f.count} ready${f.preparing > 0 ? ` (${f.preparing} preparing)` : ''}`).join(', ');

/** `vps pools` and `vps set-warm-pool`: the pools with their warm slots, and what a metal pool keeps warm. */
export function addWarmPoolCommands(vps: Command, api: () => ApiClient, print: Output): void {
  vps
    .command('pools')
    .description('list pools: class, site, runtime and warm slots (ready of kept, per flavor and image)')
    .action(async () => {
      const page = await api().get<{ items: PoolView[] }>('/v1/vps/pools');
      const rows = page.items.map((p) => ({ ...p, site: p.siteId ?? null, runtime: p.runtime ?? null, warm: warmCell(p.warm) }));
      print(page, () => table(rows, ['poolId', 'class', 'agent', 'site', 'runtime', 'warm']));
    });
  vps
    .command('set-warm-pool <poolId>')
    .description('what a metal pool keeps warm, replacing its earlier setting (no --keep: none; its slots are reaped)')
    .option(
      '--keep <flavorId:count:image>',
      'slots of a flavor and image kept stopped and ready (repeatable)',
      (v: string, all: WarmFlavor[]) => [...all, warmFlavorOf(v)],
      [],
    )
    .option('--max-slot-age <seconds>', 'a slot prepared longer ago is replaced (default a day)', seconds)
    .action(async (poolId: string, o: { keep: WarmFlavor[]; maxSlotAge?: number }) => {
      const body = { poolId, flavors: o.keep, ...(o.maxSlotAge !== undefined ? { maxSlotAgeSeconds: o.maxSlotAge } : {}) };
      const result = await api().command<CommandOutcome>('vps.setWarmPool', body);
      print(result, () => `vps.setWarmPool: ${result.events.map((e) => e.type).join(', ') || '(no change)'} (seq ${result.seq})`);
    });
}
