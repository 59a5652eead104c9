import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { modulesProjection } from '../../projections/modules/projector.ts';
import { getRollout, hostsRunning, listRollouts } from '../../projections/modules/rolloutQueries.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import { reported, started, waveStarted } from './rolloutLog.ts';

/** Applies the events in order (each `times` over, as a redelivery would), seq = position in the log. */
function project(events: readonly PlatformEvent[], times = 1) {
  const db = new Database(':memory:');
  for (const m of modulesProjection.migrations) db.exec(m);
  events.forEach((e, i) => {
    const metadata = { time: `2026-12-02T12:00:${String(i).padStart(2, '0')}.000Z`, actor: 'op' } as EventMetadata;
    for (let n = 0; n < times; n += 1) modulesProjection.apply(db, e, metadata, { seq: i + 1, subject: 'bc.evt.fleet.rollout.nginx' });
  });
  return db;
}

const id = { rolloutId: 'nginx-1' };
const hosts = ['vm1', 'vm2', 'vm3'];
const history: PlatformEvent[] = [
  started(hosts),
  waveStarted(0, ['vm1']),
  reported('vm1', 0, 'healthy'),
  waveStarted(1, ['vm2']),
  reported('vm2', 1, 'failed'),
  { type: 'RolloutHalted', data: { ...id, reason: 'wave_failed', failed: ['vm2'] } },
  { type: 'RolloutRollbackStarted', data: { ...id, version: '1.24.0', targets: ['vm1', 'vm2'] } },
  { type: 'RolloutHostRestored', data: { ...id, host: 'vm1', outcome: 'healthy' } },
];

describe('the rollouts of the modules read model', () => {
  it('shows the waves, each host’s outcome and restore, the status, the last halt and the rollback targets', () => {
    expect(getRollout(project(history), 'nginx-1')).toMatchObject({
      module: 'nginx',
      status: 'rolling-back',
      startedWaves: 2,
      waveCount: 3,
      hostCount: 3,
      halt: { reason: 'wave_failed', failed: ['vm2'] },
      rollbackTargets: ['vm1', 'vm2'],
      startedBy: 'op',
      waves: [
        { wave: 0, deadline: '2026-12-02T12:01:00.000Z', hosts: [{ host: 'vm1', outcome: 'healthy', restored: 'healthy' }] },
        { wave: 1, hosts: [{ host: 'vm2', outcome: 'failed', restored: null }] },
        { wave: 2, deadline: null, hosts: [{ host: 'vm3', outcome: null, restored: null }] },
      ],
    });
  });

  it('applying every event twice gives what applying it once does, and a later rollout is listed first', () => {
    const more: PlatformEvent[] = [...history, { type: 'RolloutAborted', data: id }, started(hosts, 2)];
    expect(getRollout(project(more, 2), 'nginx-1')).toEqual(getRollout(project(more), 'nginx-1'));
    expect(listRollouts(project(more)).map((r) => [r.rolloutId, r.status])).toEqual([
      ['nginx-2', 'running'],
      ['nginx-1', 'aborted'],
    ]);
    expect(listRollouts(project(more), { status: 'aborted' }).map((r) => r.rolloutId)).toEqual(['nginx-1']);
  });

  it('a rollout awaiting approval: its threshold, each approver once (redelivered too), and running once approved', () => {
    const digest = (started(hosts, 1, {}, 2).data as { planDigest: string }).planDigest;
    const approval = (approverId: string): PlatformEvent => ({ type: 'RolloutApprovalRecorded', data: { ...id, approverId, planDigest: digest } });
    const awaiting: PlatformEvent[] = [started(hosts, 1, {}, 2), approval('alice')];
    expect(getRollout(project(awaiting, 2), 'nginx-1')).toMatchObject({ status: 'awaiting-approval', approvalsRequired: 2, approvals: ['alice'] });
    const approved: PlatformEvent[] = [
      ...awaiting,
      approval('bob'),
      { type: 'RolloutApproved', data: { ...id, planDigest: digest, approvers: ['alice', 'bob'] } },
    ];
    expect(getRollout(project(approved, 2), 'nginx-1')).toMatchObject({ status: 'running', approvalsRequired: 2, approvals: ['alice', 'bob'] });
    expect(getRollout(project([started(hosts)]), 'nginx-1')).toMatchObject({ status: 'running', approvalsRequired: 0, approvals: [] });
  });

  it('a rollout’s default hosts: those whose plan pins the module at the version, of the template when asked', () => {
    const assigned = (nodeId: string, template: string, version: string): PlatformEvent => ({
      type: 'HostPlanAssigned',
      data: { nodeId, template, pins: [], plan: { 'nginx.core': version, openssl: '3.2.0' }, planDigest: '0'.repeat(64) },
    });
    const db = project([assigned('n2', 'web', '1.24.0'), assigned('n1', 'edge', '1.24.0'), assigned('n3', 'web', '1.26.1')]);
    expect(hostsRunning(db, 'nginx.core', '1.24.0')).toEqual(['n1', 'n2']);
    expect(hostsRunning(db, 'nginx.core', '1.24.0', 'web')).toEqual(['n2']);
    expect(hostsRunning(db, 'nginx', '1.24.0')).toEqual([]);
  });
});
