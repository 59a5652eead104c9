import type { HostOutcome, RolloutDecision, RolloutHaltReason, Waves } from '../../../schemas/fleet/rolloutWaves.ts';
import { waveOf } from './waves.ts';

/** A rollout's progress as the controller folds it: which waves were started, what each host reported. */
export interface RolloutProgress {
  readonly waves: Waves;
  /** Waves started so far (wave i was started iff i < startedWaves). */
  readonly startedWaves: number;
  /** Each host's first report; later reports of the same host are redeliveries and change nothing. */
  readonly outcomes: Readonly<Record<string, HostOutcome>>;
  /** Failed or timed-out reports in a row, in the order they arrived; a healthy report resets it. */
  readonly consecutiveFailures: number;
  /** Set once; a halted rollout stays halted until an operator continues it (rollback and abort end it instead). */
  readonly halted: { reason: RolloutHaltReason; failed: readonly string[] } | null;
  /** Failed hosts an operator continued past: their wave no longer halts for them (a new failure still does). */
  readonly accepted: readonly string[];
}

export type RolloutProgressEvent = { type: 'WaveStarted'; wave: number } | { type: 'HostReported'; host: string; outcome: HostOutcome } | { type: 'Continued' };

export interface BreakerPolicy {
  /** Failed or timed-out reports in a row that trip the breaker. */
  maxConsecutiveFailures: number;
}

export function initialProgress(waves: Waves): RolloutProgress {
  return { waves, startedWaves: 0, outcomes: {}, consecutiveFailures: 0, halted: null, accepted: [] };
}

/**
 * Folds one event. Idempotent under redelivery: a wave is started once and only next in line and never after a halt;
 * a host's report counts once and only if its wave was started (a report from a host not yet asked is not trusted).
 * The halt is decided here, as reports arrive, so it cannot be missed between two decisions: a failed canary halts
 * at once, `maxConsecutiveFailures` failures in a row trip the breaker, a wave that ends with a failure halts.
 * `Continued` lifts a halt: the failures so far are accepted (their wave ends without halting again for them) and the
 * breaker's count starts over; it changes nothing on a rollout that is not halted.
 */
export function evolveProgress(progress: RolloutProgress, event: RolloutProgressEvent, policy: BreakerPolicy): RolloutProgress {
  if (event.type === 'Continued') {
    if (progress.halted === null) return progress;
    return { ...progress, halted: null, consecutiveFailures: 0, accepted: failedHosts(progress.waves, progress.outcomes, progress.startedWaves) };
  }
  if (event.type === 'WaveStarted') {
    if (progress.halted !== null || event.wave !== progress.startedWaves || event.wave >= progress.waves.length) return progress;
    return { ...progress, startedWaves: progress.startedWaves + 1 };
  }
  const wave = waveOf(progress.waves, event.host);
  if (wave < 0 || wave >= progress.startedWaves || outcomeOf(progress.outcomes, event.host) !== undefined) return progress;
  const outcomes = { ...progress.outcomes, [event.host]: event.outcome };
  const consecutiveFailures = event.outcome === 'healthy' ? 0 : progress.consecutiveFailures + 1;
  const next = { ...progress, outcomes, consecutiveFailures };
  if (progress.halted !== null) return next;
  const failed = failedHosts(progress.waves, outcomes, progress.startedWaves);
  if (event.outcome !== 'healthy' && wave === 0) return { ...next, halted: { reason: 'canary_failed', failed } };
  if (consecutiveFailures >= policy.maxConsecutiveFailures) return { ...next, halted: { reason: 'breaker_tripped', failed } };
  const waveHosts = progress.waves[wave] ?? [];
  const waveDone = waveHosts.every((host) => outcomeOf(outcomes, host) !== undefined);
  const unaccepted = (host: string) => outcomeOf(outcomes, host) !== 'healthy' && !progress.accepted.includes(host);
  if (waveDone && waveHosts.some(unaccepted)) return { ...next, halted: { reason: 'wave_failed', failed } };
  return next;
}

/**
 * What to do next: halt (sticky), start the next wave once every host of the started ones reported healthy, wait for
 * the hosts of the current wave that have not reported, or complete.
 */
export function decideProgress(progress: RolloutProgress): RolloutDecision {
  if (progress.halted !== null) return { action: 'halt', reason: progress.halted.reason, failed: progress.halted.failed };
  if (progress.startedWaves > 0) {
    const current = progress.startedWaves - 1;
    const pending = (progress.waves[current] ?? []).filter((host) => outcomeOf(progress.outcomes, host) === undefined);
    if (pending.length > 0) return { action: 'wait', wave: current, pending };
  }
  if (progress.startedWaves < progress.waves.length) {
    return { action: 'start_wave', wave: progress.startedWaves, hosts: progress.waves[progress.startedWaves] ?? [] };
  }
  return { action: 'complete' };
}

/** The hosts asked to run the new version: those of the started waves. */
export function touchedHosts(progress: RolloutProgress): string[] {
  return progress.waves.slice(0, progress.startedWaves).flat();
}

/**
 * The hosts a rollback restores: exactly those that completed the new version, i.e. reported it applied (healthy, or
 * applied with a failing probe), in wave order. A timed-out host never said it switched, so it is not a target: its
 * pin keeps the new version until drift detection reads what it runs (absence of a report is never read either way).
 */
export function rollbackTargets(waves: Waves, outcomes: Readonly<Record<string, HostOutcome>>): string[] {
  return waves.flat().filter((host) => outcomeOf(outcomes, host) === 'healthy' || outcomeOf(outcomes, host) === 'failed');
}

function failedHosts(waves: Waves, outcomes: Readonly<Record<string, HostOutcome>>, startedWaves: number): string[] {
  return waves
    .slice(0, startedWaves)
    .flat()
    .filter((host) => outcomeOf(outcomes, host) === 'failed' || outcomeOf(outcomes, host) === 'timed-out');
}

/** A host's own outcome: a host id such as `constructor` must not read the object's prototype. */
export function outcomeOf(outcomes: Readonly<Record<string, HostOutcome>>, host: string): HostOutcome | undefined {
  return Object.hasOwn(outcomes, host) ? outcomes[host] : undefined;
}
