import type { CommandBus } from '../../../services/platform/commands/commandBus.ts';
import { rolloutAggregate } from '../../../services/fleet/rollout/rollout.ts';
import { deployedPinnedHost, MODULE } from '../../../test/support/rolloutFleet.ts';

/** `work`, tried again (up to 5 times, a second apart) while the store does not answer: the machine may be loaded. */
async function patiently<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= 5 || (err as { code?: string }).code !== 'UNAVAILABLE') throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/** Runs `work` over `items` `batch` at a time. */
export async function inBatches<T>(items: readonly T[], batch: number, work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += batch) await Promise.all(items.slice(i, i + batch).map((item) => patiently(() => work(item))));
}

export const deployHosts = (bus: CommandBus, hosts: readonly string[], siteId: string, version: string) =>
  inBatches(hosts, 50, (host) => deployedPinnedHost(bus, host, siteId, version));

/** Pins `version` on every host: a rollout's end does not re-pin, so the next one moves from what runs now. */
export const pinAll = (bus: CommandBus, hosts: readonly string[], version: string) =>
  inBatches(hosts, 50, (nodeId) => bus.execute({ name: 'fleet.pinModule', payload: { nodeId, module: MODULE, version }, actor: 'bench' }));

/** `resolver` from `fromVersion` to `toVersion` on every host: a 1-host canary, then waves of `wavePercent` %. */
export const startRollout = (bus: CommandBus, hosts: readonly string[], fromVersion: string, toVersion: string, wavePercent: number) =>
  patiently(() =>
    bus.execute({
      name: 'fleet.startRollout',
      payload: { module: MODULE, fromVersion, toVersion, hosts: [...hosts], canarySize: 1, wavePercent, maxConsecutiveFailures: 1, waveTimeoutMs: 120_000 },
      actor: 'bench',
    }),
  );

/** Polls the rollout until its status is one of `ends` (resolves it), or throws after `timeoutMs`. */
export async function rolloutEnds(bus: CommandBus, ends: readonly string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = (await patiently(() => bus.repository.load(rolloutAggregate, MODULE, 'leader'))).state.current;
    if (current && ends.includes(current.status)) return current;
    if (Date.now() > deadline) throw new Error(`rollout still ${current?.status ?? 'absent'} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
