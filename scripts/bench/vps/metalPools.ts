import { AggregateRepository } from '../../../services/platform/commands/aggregateRepository.ts';
import { holdBookAggregate } from '../../../services/vps/hold/holdBook.ts';
import { allocatedByNode } from '../../../services/vps/placement/bookSnapshot.ts';
import { startMetalStack } from '../../../test/vps/metalStack.ts';
import { SSH_KEY } from '../../../test/vps/vpsPayloads.ts';
import { RunningWatch } from './driver.ts';

/** One pool's creates: how fast they were accepted, and how long from the create to `running`. */
export interface MetalPoolFigures {
  readonly creates: number;
  /** Creates accepted per second of command time, sent one at a time. */
  readonly acceptedPerSecond: number;
  readonly createToRunningP50Ms: number;
  readonly createToRunningP99Ms: number;
  readonly running: number;
  /** Creates placed on a warm slot (`InstancePlaced.warmSlot`). */
  readonly tookWarmSlot: number;
}

/** Creates sent all at once into the cold pool: each is placed on the site's one book, so they queue there. */
export interface MetalBurstFigures {
  readonly creates: number;
  /** Creates accepted per second, from the first sent to the last answered. */
  readonly acceptedPerSecond: number;
  /** From the first create sent to the last instance `running`. */
  readonly allRunningSeconds: number;
  readonly createToRunningP50Ms: number;
  readonly createToRunningP99Ms: number;
  readonly running: number;
  /** The largest share of a host's vCPUs or memory its book was seen giving instances and slots: never above 1. */
  readonly peakHostShare: number;
}

const HOST_CORES = 64;
/** What `deployMetalHost` gives each host. */
const HOST_MEMORY_MIB = 32_768;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/**
 * Metal-pool creates, warm against cold in one run (`bench:vps`): a real nats-server, the command bus, the
 * `vps-reconciler` and two deployed hosts each with an in-process `bcd node` running the process runtime (sandboxed),
 * whose image `test:prepare-<ms>` makes preparing a new instance take `prepareMs` (what a disk or bundle costs; a warm
 * slot has paid it). Each round creates one instance in the warm pool (which keeps `warmSlots` ready) and one in the cold
 * pool, alternating which goes first, one at a time, each timed from the create to its `InstanceObserved running`;
 * between rounds the warm pool is let refill, so each warm create finds a ready slot. Then `burst` creates are sent at
 * once into the cold pool: what an operator starting many instances together meets (every placement goes through
 * the site's one hold book, under optimistic concurrency). Placing them is quick (16 placed within 0.16 s when this was
 * written); what follows is not: `bcd node` applies one instance at a time, and in this stack both hosts share one
 * runtime plugin process, so the burst's `prepareMs` is paid once per instance in a row.
 */
export async function benchMetalPools(options: { rounds: number; prepareMs: number; warmSlots: number; burst: number; stallMs: number }) {
  const stack = await startMetalStack({ hosts: 2, cores: HOST_CORES });
  const watch = new RunningWatch(stack.env.nc);
  try {
    const { run } = stack;
    const image = `test:prepare-${options.prepareMs}`;
    const book = new AggregateRepository(stack.env.store);
    const readySlots = async () => Object.values((await book.load(holdBookAggregate, 'dc1')).state.warmSlots ?? {}).filter((s) => s.readyAt !== null).length;
    const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
      const deadline = Date.now() + options.stallMs;
      while (!(await ok())) {
        if (Date.now() > deadline) throw new Error(`metal pools: ${what} not reached in ${options.stallMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await until('two hosts deployed', () => stack.hostsDeployed() === 2);
    await run('vps.createFlavor', { flavorId: 'bench-small', vcpus: 1, memoryMib: 512, diskGib: 5 });
    await run('vps.createTenant', { tenantId: 'bench-t', name: 'bench' });
    await run('vps.setQuota', { tenantId: 'bench-t', instances: 10_000, vcpus: 10_000, memoryMib: 10_000_000, diskGib: 1_000_000 });
    for (const poolId of ['metal-warm', 'metal-cold']) {
      await run('vps.createPool', { poolId, class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
      await run('vps.mapFlavor', { flavorId: 'bench-small', poolId, offerId: 'hw-small' });
      await run('vps.offerPool', { poolId, tenantId: 'bench-t' });
    }
    await run('vps.setWarmPool', { poolId: 'metal-warm', flavors: [{ flavorId: 'bench-small', image, count: options.warmSlots }] });
    const samples = { warm: { acceptMs: [] as number[], toRunning: [] as number[] }, cold: { acceptMs: [] as number[], toRunning: [] as number[] } };
    for (let round = 0; round < options.rounds; round++) {
      await until('the warm pool ready', async () => (await readySlots()) >= options.warmSlots);
      for (const kind of round % 2 === 0 ? (['warm', 'cold'] as const) : (['cold', 'warm'] as const)) {
        const instanceId = `${kind}-${round}`;
        const sentAt = Date.now();
        await run('vps.createInstance', { tenantId: 'bench-t', instanceId, poolId: `metal-${kind}`, flavorId: 'bench-small', image, sshKeys: [SSH_KEY] });
        samples[kind].acceptMs.push(Date.now() - sentAt);
        await until(`${instanceId} running`, () => watch.runningAt.has(instanceId));
        samples[kind].toRunning.push(watch.runningAt.get(instanceId)! - sentAt);
      }
    }
    let peakHostShare = 0;
    const sendBurst = async (creates: number, create: Record<string, unknown>): Promise<MetalBurstFigures> => {
      const ids = Array.from({ length: creates }, (_, i) => `burst-${i}`);
      const startedAt = Date.now();
      const sentAt = new Map<string, number>();
      await Promise.all(
        ids.map((instanceId) => {
          sentAt.set(instanceId, Date.now());
          return run('vps.createInstance', { ...create, instanceId });
        }),
      );
      const acceptedAt = Date.now();
      await until(`${creates} burst creates running`, async () => {
        const taken = allocatedByNode((await book.load(holdBookAggregate, 'dc1')).state);
        for (const used of taken.values()) peakHostShare = Math.max(peakHostShare, used.vcpus / HOST_CORES, used.memoryMib / HOST_MEMORY_MIB);
        return ids.every((id) => watch.runningAt.has(id));
      });
      const toRunning = ids.map((id) => watch.runningAt.get(id)! - sentAt.get(id)!);
      return {
        creates,
        acceptedPerSecond: creates / ((acceptedAt - startedAt) / 1_000),
        allRunningSeconds: (Math.max(...ids.map((id) => watch.runningAt.get(id)!)) - startedAt) / 1_000,
        createToRunningP50Ms: percentile(toRunning, 50),
        createToRunningP99Ms: percentile(toRunning, 99),
        running: toRunning.length,
        peakHostShare,
      };
    };
    const figures = (kind: 'warm' | 'cold'): MetalPoolFigures => {
      const { acceptMs, toRunning } = samples[kind];
      const ids = acceptMs.map((_, round) => `bench-t/${kind}-${round}`);
      return {
        creates: acceptMs.length,
        acceptedPerSecond: acceptMs.length / (acceptMs.reduce((a, b) => a + b, 0) / 1_000),
        createToRunningP50Ms: percentile(toRunning, 50),
        createToRunningP99Ms: percentile(toRunning, 99),
        running: toRunning.length,
        tookWarmSlot: ids.filter((id) => stack.reconciler.model.instances.get(id)?.fromSlot !== undefined).length,
      };
    };
    const burst = await sendBurst(options.burst, { tenantId: 'bench-t', poolId: 'metal-cold', flavorId: 'bench-small', image, sshKeys: [SSH_KEY] });
    return { rounds: options.rounds, prepareMs: options.prepareMs, warmSlots: options.warmSlots, warm: figures('warm'), cold: figures('cold'), burst };
  } finally {
    watch.stop();
    await stack.close();
  }
}
