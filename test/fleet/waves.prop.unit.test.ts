import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HostOutcome, WavePlanOptions } from '../../schemas/fleet/rolloutWaves.ts';
import {
  decideProgress,
  evolveProgress,
  initialProgress,
  rollbackTargets,
  type RolloutProgress,
  type RolloutProgressEvent,
  touchedHosts,
} from '../../services/fleet/rollout/progress.ts';
import { planWaves } from '../../services/fleet/rollout/waves.ts';
import { shuffled } from './closureArbitraries.ts';

const RUNS = { numRuns: 300 };
const hostIds = fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { minLength: 1, maxLength: 120 });
const options: fc.Arbitrary<WavePlanOptions> = fc.record({ canarySize: fc.integer({ min: 1, max: 5 }), wavePercent: fc.integer({ min: 1, max: 100 }) });
const outcome = fc.constantFrom<HostOutcome>('healthy', 'healthy', 'healthy', 'failed', 'timed-out');

/**
 * Drives a rollout as its controller would, with the world answering at random: each step either does what the
 * decision says (start the wave, or one pending host reports) or redelivers an event already seen. Returns the
 * progress and the hosts whose first report in a started wave said the new version was applied.
 */
function drive(waves: string[][], choices: number[], outcomes: HostOutcome[], maxConsecutiveFailures: number) {
  const policy = { maxConsecutiveFailures };
  let progress: RolloutProgress = initialProgress(waves);
  const seen: RolloutProgressEvent[] = [];
  const applied = new Set<string>();
  const reported = new Set<string>();
  for (let step = 0; step < choices.length; step += 1) {
    const choice = choices[step]!;
    const decision = decideProgress(progress);
    let event: RolloutProgressEvent | undefined;
    if (seen.length > 0 && choice % 4 === 0) event = seen[choice % seen.length];
    else if (decision.action === 'start_wave') event = { type: 'WaveStarted', wave: decision.wave };
    else if (decision.action === 'wait')
      event = { type: 'HostReported', host: decision.pending[choice % decision.pending.length]!, outcome: outcomes[step % outcomes.length]! };
    else if (decision.action === 'halt' && progress.startedWaves > 0) {
      // Hosts still in flight when the rollout halted report late; they count for rollback, they start nothing.
      const late = touchedHosts(progress).filter((h) => !reported.has(h));
      if (late.length > 0) event = { type: 'HostReported', host: late[choice % late.length]!, outcome: outcomes[step % outcomes.length]! };
    }
    if (event === undefined) continue;
    if (event.type === 'HostReported' && !reported.has(event.host)) {
      reported.add(event.host);
      if (event.outcome !== 'timed-out') applied.add(event.host);
    }
    seen.push(event);
    progress = evolveProgress(progress, event, policy);
  }
  return { progress, applied, seen };
}

/** A rollout driven by random reports: hosts, wave options, report order, outcomes and the breaker's limit. */
const drivenRollout = [
  hostIds,
  options,
  fc.array(fc.nat(), { maxLength: 300 }),
  fc.array(outcome, { minLength: 1, maxLength: 10 }),
  fc.integer({ min: 1, max: 5 }),
] as const;

describe('rollout waves (properties)', () => {
  it('partition the hosts: each exactly once, canary first, equal waves then one no larger, none empty', () => {
    fc.assert(
      fc.property(hostIds, options, (hosts, opts) => {
        const waves = planWaves(hosts, opts);
        expect(waves.flat().sort()).toEqual([...hosts].sort());
        expect(waves.every((w) => w.length > 0)).toBe(true);
        expect(waves[0]).toHaveLength(Math.min(opts.canarySize, hosts.length));
        const rest = hosts.length - waves[0]!.length;
        const size = Math.ceil((opts.wavePercent * rest) / 100);
        const later = waves.slice(1);
        later.slice(0, -1).forEach((w) => expect(w).toHaveLength(size));
        if (later.length > 0) expect(later.at(-1)!.length).toBeLessThanOrEqual(size);
        expect(later.length).toBe(rest === 0 ? 0 : Math.ceil(rest / size));
      }),
      RUNS,
    );
  });

  it('are a function of the set of hosts: any order gives the same waves', () => {
    fc.assert(
      fc.property(hostIds, options, fc.integer(), (hosts, opts, seed) => {
        expect(planWaves(shuffled(hosts, seed), opts)).toEqual(planWaves(hosts, opts));
      }),
      RUNS,
    );
  });

  it('a canary failure halts with no host beyond the canary touched, whatever arrives after', () => {
    fc.assert(
      fc.property(
        hostIds.filter((h) => h.length > 1),
        options,
        fc.array(fc.nat(), { minLength: 1, maxLength: 200 }),
        fc.array(outcome, { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 5 }),
        (hosts, opts, choices, outcomes, max) => {
          const waves = planWaves(hosts, opts);
          fc.pre(waves.length > 1);
          const { progress, seen } = drive(waves, choices, outcomes, max);
          const canaryFailed = seen.some((e) => e.type === 'HostReported' && e.outcome !== 'healthy' && waves[0]!.includes(e.host));
          fc.pre(canaryFailed);
          expect(progress.halted?.reason).toBe('canary_failed');
          expect(touchedHosts(progress)).toEqual(waves[0]);
          // Even a redelivered or forged start of the next wave touches nobody once halted.
          const after = evolveProgress(progress, { type: 'WaveStarted', wave: 1 }, { maxConsecutiveFailures: max });
          expect(touchedHosts(after)).toEqual(waves[0]);
          expect(decideProgress(after).action).toBe('halt');
        },
      ),
      RUNS,
    );
  });

  it('rollback targets are exactly the hosts that completed the new version', () => {
    fc.assert(
      fc.property(...drivenRollout, (hosts, opts, choices, outcomes, max) => {
        const waves = planWaves(hosts, opts);
        const { progress, applied } = drive(waves, choices, outcomes, max);
        const targets = rollbackTargets(waves, progress.outcomes);
        expect(new Set(targets).size).toBe(targets.length);
        expect([...targets].sort()).toEqual([...applied].sort());
        expect(targets.every((h) => touchedHosts(progress).includes(h))).toBe(true);
      }),
      RUNS,
    );
  });

  it('advances only past waves whose every host reported healthy; the breaker trips at maxConsecutiveFailures', () => {
    fc.assert(
      fc.property(...drivenRollout, (hosts, opts, choices, outcomes, max) => {
        const waves = planWaves(hosts, opts);
        const { progress, seen } = drive(waves, choices, outcomes, max);
        for (let wave = 0; wave < progress.startedWaves - 1; wave += 1) {
          expect(waves[wave]!.every((h) => progress.outcomes[h] === 'healthy')).toBe(true);
        }
        // Failures in a row, counted over the first report of each host in arrival order.
        let run = 0;
        let tripped = false;
        const counted = new Set<string>();
        for (const e of seen) {
          if (e.type !== 'HostReported' || counted.has(e.host)) continue;
          counted.add(e.host);
          run = e.outcome === 'healthy' ? 0 : run + 1;
          if (run >= max) tripped = true;
        }
        if (tripped) expect(progress.halted).not.toBeNull();
        if (progress.halted === null && decideProgress(progress).action === 'complete') {
          expect(waves.flat().every((h) => progress.outcomes[h] === 'healthy')).toBe(true);
        }
      }),
      RUNS,
    );
  });
});
