import { describe, expect, it } from 'vitest';
import type { RolloutDetailView } from '../../schemas/fleet/rolloutViews.ts';
import { followEnds, followExitCodes, rolloutChanges } from '../../scripts/cli/rolloutProgress.ts';

const base: RolloutDetailView = {
  rolloutId: 'nginx-1',
  module: 'nginx',
  fromVersion: '1.24.0',
  toVersion: '1.26.1',
  template: null,
  status: 'awaiting-approval',
  planDigest: 'a'.repeat(64),
  approvalsRequired: 2,
  approvals: [],
  approvalExpiresAt: '2026-12-02T13:00:00.000Z',
  rejectedBy: null,
  options: { canarySize: 1, wavePercent: 50, maxConsecutiveFailures: 2, waveTimeoutMs: 60_000 },
  waveCount: 2,
  startedWaves: 0,
  hostCount: 3,
  halt: null,
  rollbackTargets: null,
  startedAt: '2026-12-02T12:00:00.000Z',
  startedBy: 'op',
  updatedAt: '2026-12-02T12:00:00.000Z',
  waves: [
    { wave: 0, deadline: null, hosts: [{ host: 'vm1', wave: 0, outcome: null, restored: null }] },
    {
      wave: 1,
      deadline: null,
      hosts: [
        { host: 'vm2', wave: 1, outcome: null, restored: null },
        { host: 'vm3', wave: 1, outcome: null, restored: null },
      ],
    },
  ],
};

/** `base` with wave `n` started and the given hosts' outcomes. */
function progressed(
  over: Partial<RolloutDetailView>,
  started: number,
  outcomes: Record<string, 'healthy' | 'failed'> = {},
  restored: Record<string, 'healthy'> = {},
) {
  return {
    ...base,
    ...over,
    waves: base.waves.map((w) => ({
      ...w,
      deadline: w.wave < started ? `2026-12-02T12:0${w.wave + 1}:00.000Z` : null,
      hosts: w.hosts.map((h) => ({ ...h, outcome: outcomes[h.host] ?? null, restored: restored[h.host] ?? null })),
    })),
  };
}

describe('rollouts --follow: what it prints and where it stops', () => {
  it('describes the first read whole, then each approval, status change, wave start, outcome and restore once', () => {
    expect(rolloutChanges(undefined, base)).toEqual([
      `nginx-1: nginx 1.24.0 → 1.26.1, 3 host(s) in 2 wave(s), plan ${'a'.repeat(64)}`,
      'nginx-1: awaiting-approval',
    ]);
    const approved = progressed({ status: 'running', approvals: ['alice', 'bob'] }, 1);
    expect(rolloutChanges(base, approved)).toEqual([
      'nginx-1: approved by alice (1/2)',
      'nginx-1: approved by bob (2/2)',
      'nginx-1: running',
      'nginx-1: wave 0 (canary) started: vm1 (deadline 2026-12-02T12:01:00.000Z)',
    ]);
    expect(rolloutChanges(approved, approved)).toEqual([]);
    const halted = progressed({ status: 'halted', approvals: ['alice', 'bob'], halt: { reason: 'wave_failed', failed: ['vm2'] } }, 2, {
      vm1: 'healthy',
      vm2: 'failed',
    });
    expect(rolloutChanges(approved, halted)).toEqual([
      'nginx-1: vm1 (wave 0) healthy',
      'nginx-1: wave 1 started: vm2, vm3 (deadline 2026-12-02T12:02:00.000Z)',
      'nginx-1: vm2 (wave 1) failed',
      'nginx-1: halted: wave_failed (failed: vm2)',
    ]);
    const rolledBack = progressed({ ...halted, status: 'rolled-back' }, 2, { vm1: 'healthy', vm2: 'failed' }, { vm1: 'healthy' });
    expect(rolloutChanges(halted, rolledBack)).toEqual(['nginx-1: vm1 restored to 1.24.0: healthy', 'nginx-1: rolled-back']);
  });

  it('stops at an end or a halt with the exit code that says which; goes on while awaiting approval, running, paused or rolling back', () => {
    expect(followExitCodes).toEqual({ completed: 0, halted: 3, 'rolled-back': 4, aborted: 5, rejected: 6, 'approval-expired': 7 });
    expect((['awaiting-approval', 'running', 'paused', 'rolling-back'] as const).filter(followEnds)).toEqual([]);
    expect((['completed', 'halted', 'rolled-back', 'aborted', 'rejected', 'approval-expired'] as const).every(followEnds)).toBe(true);
  });
});
