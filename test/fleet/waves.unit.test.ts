import { describe, expect, it } from 'vitest';
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

const hosts = (n: number): string[] => Array.from({ length: n }, (_, i) => `h${String(i).padStart(4, '0')}`);
const run = (progress: RolloutProgress, events: RolloutProgressEvent[], maxConsecutiveFailures = 2): RolloutProgress =>
  events.reduce((p, e) => evolveProgress(p, e, { maxConsecutiveFailures }), progress);

describe('planWaves (examples)', () => {
  it('1,000 hosts, a canary of 1, 10 % waves: 1 + nine waves of 100 + one of 99', () => {
    const waves = planWaves(hosts(1000), { canarySize: 1, wavePercent: 10 });
    expect(waves.map((w) => w.length)).toEqual([1, 100, 100, 100, 100, 100, 100, 100, 100, 100, 99]);
    expect(waves[0]).toEqual(['h0000']);
  });

  it('orders by host id in code points, and counts a duplicate id once', () => {
    expect(planWaves(['b', 'a', 'C', 'b'], { canarySize: 1, wavePercent: 50 })).toEqual([['C'], ['a'], ['b']]);
  });

  it('no hosts: no waves; fewer hosts than the canary: one wave', () => {
    expect(planWaves([], { canarySize: 1, wavePercent: 10 })).toEqual([]);
    expect(planWaves(['x', 'y'], { canarySize: 3, wavePercent: 10 })).toEqual([['x', 'y']]);
  });
});

describe('rollout progress (examples)', () => {
  const waves = planWaves(['vm1', 'vm2', 'vm3', 'vm4', 'vm5'], { canarySize: 1, wavePercent: 50 });

  it('starts the canary, waits for it, advances after every host of a wave is healthy, completes', () => {
    let p = initialProgress(waves);
    expect(decideProgress(p)).toEqual({ action: 'start_wave', wave: 0, hosts: ['vm1'] });
    p = run(p, [{ type: 'WaveStarted', wave: 0 }]);
    expect(decideProgress(p)).toEqual({ action: 'wait', wave: 0, pending: ['vm1'] });
    p = run(p, [
      { type: 'HostReported', host: 'vm1', outcome: 'healthy' },
      { type: 'WaveStarted', wave: 1 },
      { type: 'HostReported', host: 'vm2', outcome: 'healthy' },
    ]);
    expect(decideProgress(p)).toEqual({ action: 'wait', wave: 1, pending: ['vm3'] });
    p = run(p, [
      { type: 'HostReported', host: 'vm3', outcome: 'healthy' },
      { type: 'WaveStarted', wave: 2 },
      { type: 'HostReported', host: 'vm4', outcome: 'healthy' },
      { type: 'HostReported', host: 'vm5', outcome: 'healthy' },
    ]);
    expect(decideProgress(p)).toEqual({ action: 'complete' });
  });

  it('canary_failed: a failing canary halts, the other hosts are never touched, rollback restores the canary', () => {
    const p = run(initialProgress(waves), [
      { type: 'WaveStarted', wave: 0 },
      { type: 'HostReported', host: 'vm1', outcome: 'failed' },
      { type: 'WaveStarted', wave: 1 },
    ]);
    expect(decideProgress(p)).toEqual({ action: 'halt', reason: 'canary_failed', failed: ['vm1'] });
    expect(touchedHosts(p)).toEqual(['vm1']);
    expect(rollbackTargets(waves, p.outcomes)).toEqual(['vm1']);
  });

  it('breaker_tripped: maxConsecutiveFailures failures in a row halt mid-wave; wave_failed: a wave ends with one failure', () => {
    const wide = planWaves(hosts(7), { canarySize: 1, wavePercent: 100 });
    const started = run(initialProgress(wide), [
      { type: 'WaveStarted', wave: 0 },
      { type: 'HostReported', host: 'h0000', outcome: 'healthy' },
      { type: 'WaveStarted', wave: 1 },
      { type: 'HostReported', host: 'h0001', outcome: 'healthy' },
      { type: 'HostReported', host: 'h0002', outcome: 'failed' },
    ]);
    const tripped = run(started, [{ type: 'HostReported', host: 'h0003', outcome: 'timed-out' }]);
    expect(decideProgress(tripped)).toEqual({ action: 'halt', reason: 'breaker_tripped', failed: ['h0002', 'h0003'] });
    expect(rollbackTargets(wide, tripped.outcomes)).toEqual(['h0000', 'h0001', 'h0002']);

    const oneFailure = run(
      started,
      ['h0003', 'h0004', 'h0005', 'h0006'].map((host) => ({ type: 'HostReported', host, outcome: 'healthy' }) as const),
      5,
    );
    expect(decideProgress(oneFailure)).toEqual({ action: 'halt', reason: 'wave_failed', failed: ['h0002'] });
  });

  it('a redelivered report or wave start changes nothing; a report from a host not yet asked is not trusted', () => {
    const p = run(initialProgress(waves), [
      { type: 'WaveStarted', wave: 0 },
      { type: 'HostReported', host: 'vm2', outcome: 'healthy' },
      { type: 'HostReported', host: 'vm1', outcome: 'healthy' },
    ]);
    expect(p.outcomes).toEqual({ vm1: 'healthy' });
    expect(
      run(p, [
        { type: 'WaveStarted', wave: 0 },
        { type: 'HostReported', host: 'vm1', outcome: 'failed' },
      ]),
    ).toEqual(p);
  });

  it('Continued lifts a halt: the failures so far are accepted, a new failure halts again, and it changes nothing unless halted', () => {
    const halted = run(initialProgress(waves), [
      { type: 'WaveStarted', wave: 0 },
      { type: 'HostReported', host: 'vm1', outcome: 'healthy' },
      { type: 'WaveStarted', wave: 1 },
      { type: 'HostReported', host: 'vm2', outcome: 'failed' },
      { type: 'HostReported', host: 'vm3', outcome: 'healthy' },
    ]);
    expect(decideProgress(halted)).toMatchObject({ action: 'halt', reason: 'wave_failed' });
    const continued = run(halted, [{ type: 'Continued' }]);
    expect([continued.accepted, continued.consecutiveFailures, decideProgress(continued)]).toEqual([
      ['vm2'],
      0,
      { action: 'start_wave', wave: 2, hosts: ['vm4', 'vm5'] },
    ]);
    expect(run(continued, [{ type: 'Continued' }])).toEqual(continued);
    const again = run(continued, [
      { type: 'WaveStarted', wave: 2 },
      { type: 'HostReported', host: 'vm4', outcome: 'healthy' },
      { type: 'HostReported', host: 'vm5', outcome: 'failed' },
    ]);
    expect(decideProgress(again)).toEqual({ action: 'halt', reason: 'wave_failed', failed: ['vm2', 'vm5'] });
  });
});
