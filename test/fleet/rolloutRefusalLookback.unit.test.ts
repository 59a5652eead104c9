import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { RolloutControllerModel } from '../../services/processes/rolloutController/controllerModel.ts';
import { REFUSAL_CLOCK_SLACK_MS, refusalLookbackStart } from '../../services/processes/rolloutController/refusalLookback.ts';
import { reported, started } from './rolloutLog.ts';

const DAY = 86_400_000;
/** Now, three days after the first rollout's canary: far past the fixed 24 h look-back the watch used to have. */
const NOW = Date.parse('2026-12-05T12:00:00.000Z');
const T0 = NOW - 3 * DAY;
const hosts = ['a1', 'b1', 'b2'];

/** Wave `wave` of `rolloutId` started at `at` (ms); the test options give each wave 60 s. */
const waveAt = (wave: number, waveHosts: string[], at: number, rolloutId = 'nginx-1'): RolloutEvent => ({
  type: 'RolloutWaveStarted',
  data: { rolloutId, wave, hosts: waveHosts, deadline: new Date(at + 60_000).toISOString() },
});

function modelOf(events: readonly RolloutEvent[]): RolloutControllerModel {
  const model = new RolloutControllerModel();
  for (const event of events) model.apply({ type: 'event', event });
  return model;
}

describe('the refused-apply watch reads back to the rollout, not a fixed day', () => {
  it('starts at the earliest started wave still waiting for a host, however long ago, less the clock slack', () => {
    // Paused three days on its canary: the canary's refusal, stored three days ago, is still read.
    const paused = modelOf([started(hosts), waveAt(0, ['a1'], T0), { type: 'RolloutPaused', data: { rolloutId: 'nginx-1' } }]);
    expect(refusalLookbackStart(paused, NOW)).toBe(T0 - REFUSAL_CLOCK_SLACK_MS);
    expect(NOW - refusalLookbackStart(paused, NOW)).toBeGreaterThan(DAY);
    // The canary reported: only the wave still waiting counts, from its own start.
    const later = T0 + 2 * DAY;
    const second = modelOf([started(hosts), waveAt(0, ['a1'], T0), reported('a1', 0, 'healthy'), waveAt(1, ['b1', 'b2'], later)]);
    expect(refusalLookbackStart(second, NOW)).toBe(later - REFUSAL_CLOCK_SLACK_MS);
  });

  it('while rolling back, from the last started wave (a restore is sent after every started host reported)', () => {
    const halted: RolloutEvent = { type: 'RolloutHalted', data: { rolloutId: 'nginx-1', reason: 'wave_failed', failed: ['b1'] } };
    const rollingBack = modelOf([
      started(hosts),
      waveAt(0, ['a1'], T0),
      reported('a1', 0, 'healthy'),
      waveAt(1, ['b1', 'b2'], T0 + DAY),
      reported('b1', 1, 'failed'),
      reported('b2', 1, 'healthy'),
      halted,
      { type: 'RolloutRollbackStarted', data: { rolloutId: 'nginx-1', version: '1.24.0', targets: ['a1', 'b1', 'b2'] } },
    ]);
    expect(refusalLookbackStart(rollingBack, NOW)).toBe(T0 + DAY - REFUSAL_CLOCK_SLACK_MS);
  });

  it('reads nothing before now when no active rollout waits on a host: ended, awaiting approval, or every host reported', () => {
    expect(refusalLookbackStart(modelOf([]), NOW)).toBe(NOW);
    expect(refusalLookbackStart(modelOf([started(hosts, 1, {}, 2)]), NOW)).toBe(NOW);
    const aborted = modelOf([started(hosts), waveAt(0, ['a1'], T0), { type: 'RolloutAborted', data: { rolloutId: 'nginx-1' } }]);
    expect(refusalLookbackStart(aborted, NOW)).toBe(NOW);
    // Halted with every started host reported: no refusal can change an outcome.
    const halted = modelOf([
      started(hosts),
      waveAt(0, ['a1'], T0),
      reported('a1', 0, 'failed'),
      { type: 'RolloutHalted', data: { rolloutId: 'nginx-1', reason: 'canary_failed', failed: ['a1'] } },
    ]);
    expect(refusalLookbackStart(halted, NOW)).toBe(NOW);
  });

  it('takes the earliest over several modules', () => {
    const nginx = [started(hosts), waveAt(0, ['a1'], T0)];
    const other: RolloutEvent[] = [
      { ...started(['c1']), data: { ...(started(['c1']).data as object), rolloutId: 'redis-1', module: 'redis' } } as RolloutEvent,
      waveAt(0, ['c1'], T0 - DAY, 'redis-1'),
    ];
    expect(refusalLookbackStart(modelOf([...nginx, ...other]), NOW)).toBe(T0 - DAY - REFUSAL_CLOCK_SLACK_MS);
  });
});
