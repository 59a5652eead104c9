import type { Finding } from '../../../schemas/doctor.ts';
import { finding } from './finding.ts';

/** Beyond this, signed requests (grants, boot tokens: ±60 s) and token expiries start to misbehave. */
const ERROR_SKEW_MS = 30_000;
/** Beyond this, an operator should look at time synchronisation. */
const WARNING_SKEW_MS = 2_000;

/** A server's clock as the doctor read it, and how precise the reading is (an HTTP Date header has whole seconds). */
export interface ClockSample {
  source: 'nats' | 'api';
  serverTimeMs: number;
  resolutionMs: number;
}

/** Compares each server's clock with this machine's; a sample's resolution is not counted as skew. */
export function checkClock(samples: readonly ClockSample[], nowMs: number): Finding[] {
  if (samples.length === 0) return [finding('clock', 'CHECK_SKIPPED', 'info', 'no server time to compare with: neither NATS ($SYS) nor the API answered')];
  return samples.map((sample) => {
    const skewMs = Math.max(0, Math.abs(sample.serverTimeMs - nowMs) - sample.resolutionMs);
    const detail = { source: sample.source, skewMs };
    if (skewMs > ERROR_SKEW_MS)
      return finding('clock', 'CLOCK_SKEW', 'error', `the ${sample.source} server's clock is ${Math.round(skewMs / 1000)} s off this machine's`, detail);
    if (skewMs > WARNING_SKEW_MS)
      return finding('clock', 'CLOCK_SKEW', 'warning', `the ${sample.source} server's clock is ${(skewMs / 1000).toFixed(1)} s off this machine's`, detail);
    return finding('clock', 'CLOCK_OK', 'info', `the ${sample.source} server's clock agrees with this machine's`, detail);
  });
}
