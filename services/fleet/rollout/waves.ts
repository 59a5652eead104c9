import type { WavePlanOptions, Waves } from '../../../schemas/fleet/rolloutWaves.ts';

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The waves of a rollout, a pure function of the hosts and the options: the canary (the first `canarySize` hosts),
 * then waves of ceil(`wavePercent`% of the hosts left after the canary), the last one smaller when it does not divide.
 * Every host is in exactly one wave, no wave is empty.
 *
 * Hosts are taken in code-point order of their ids (not a hash): the waves, and so the digest of the plan an approver
 * signs, depend on the set of hosts only, and an operator can say from the host list alone which host is the canary
 * and which wave a host is in. Host ids carry no placement, so the order spreads no worse than a hash would; a
 * rollout that wants another canary names fewer hosts or pins it. Duplicate ids count once.
 */
export function planWaves(hosts: readonly string[], options: WavePlanOptions): string[][] {
  const ordered = [...new Set(hosts)].sort(byCodePoint);
  if (ordered.length === 0) return [];
  const canary = ordered.slice(0, options.canarySize);
  const rest = ordered.slice(canary.length);
  const waves = [canary];
  if (rest.length === 0) return waves;
  // Integer arithmetic: ceil(p * n / 100) without a float that could round 7 * 100 / 100 to 7.000000001.
  const size = Math.floor((options.wavePercent * rest.length + 99) / 100);
  for (let at = 0; at < rest.length; at += size) waves.push(rest.slice(at, at + size));
  return waves;
}

/** The wave a host is in, or -1. */
export function waveOf(waves: Waves, host: string): number {
  return waves.findIndex((wave) => wave.includes(host));
}
