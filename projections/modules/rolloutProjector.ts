import type { Database } from 'better-sqlite3';
import type { PlatformEvent } from '../../schemas/events.ts';
import type { RolloutStatus } from '../../schemas/fleet/rolloutViews.ts';
import { statement } from '../runtime/statements.ts';

/** The status each of these events leaves a rollout in. */
const statusAfter: Partial<Record<PlatformEvent['type'], RolloutStatus>> = {
  RolloutApproved: 'running',
  RolloutRejected: 'rejected',
  RolloutApprovalExpired: 'approval-expired',
  RolloutHalted: 'halted',
  RolloutPaused: 'paused',
  RolloutResumed: 'running',
  RolloutContinued: 'running',
  RolloutRollbackStarted: 'rolling-back',
  RolloutRolledBack: 'rolled-back',
  RolloutAborted: 'aborted',
  RolloutCompleted: 'completed',
};

/**
 * The `rollouts`, `rollout_waves` and `rollout_hosts` tables of the `modules` read model. Idempotent: a row's status and
 * halt move only for an event later in the log than the one that last moved them, and a host's first outcome stays.
 */
export function applyRolloutEvent(db: Database, event: PlatformEvent, metadata: { time: string; actor: string }, seq: number): void {
  switch (event.type) {
    case 'RolloutStarted': {
      const d = event.data;
      statement(
        db,
        `INSERT OR IGNORE INTO rollouts (rollout_id, module, from_version, to_version, template, status, plan_digest, approvals_required,
           approval_expires_at, options, wave_count, host_count, started_at, started_by, updated_at, seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        d.rolloutId,
        d.module,
        d.fromVersion,
        d.toVersion,
        d.template,
        d.approvalsRequired > 0 ? 'awaiting-approval' : 'running',
        d.planDigest,
        d.approvalsRequired,
        d.approvalExpiresAt,
        JSON.stringify(d.options),
        d.waves.length,
        d.waves.flat().length,
        metadata.time,
        metadata.actor,
        metadata.time,
        seq,
      );
      let position = 0;
      d.waves.forEach((hosts, wave) => {
        statement(db, 'INSERT OR IGNORE INTO rollout_waves (rollout_id, wave, deadline) VALUES (?, ?, NULL)').run(d.rolloutId, wave);
        for (const host of hosts) {
          statement(db, 'INSERT OR IGNORE INTO rollout_hosts (rollout_id, host, wave, position) VALUES (?, ?, ?, ?)').run(d.rolloutId, host, wave, position++);
        }
      });
      return;
    }
    case 'RolloutWaveStarted':
      statement(db, 'UPDATE rollout_waves SET deadline = ? WHERE rollout_id = ? AND wave = ?').run(event.data.deadline, event.data.rolloutId, event.data.wave);
      statement(db, 'UPDATE rollouts SET started_waves = MAX(started_waves, ?), updated_at = ? WHERE rollout_id = ?').run(
        event.data.wave + 1,
        metadata.time,
        event.data.rolloutId,
      );
      return;
    case 'RolloutHostReported':
      statement(db, 'UPDATE rollout_hosts SET outcome = COALESCE(outcome, ?) WHERE rollout_id = ? AND host = ?').run(
        event.data.outcome,
        event.data.rolloutId,
        event.data.host,
      );
      return;
    case 'RolloutHostRestored':
      statement(db, 'UPDATE rollout_hosts SET restored = COALESCE(restored, ?) WHERE rollout_id = ? AND host = ?').run(
        event.data.outcome,
        event.data.rolloutId,
        event.data.host,
      );
      return;
    case 'RolloutHalted':
      moveStatus(db, event.data.rolloutId, 'halted', metadata.time, seq);
      statement(db, 'UPDATE rollouts SET halt = ? WHERE rollout_id = ? AND seq = ?').run(
        JSON.stringify({ reason: event.data.reason, failed: event.data.failed }),
        event.data.rolloutId,
        seq,
      );
      return;
    case 'RolloutRollbackStarted':
      moveStatus(db, event.data.rolloutId, 'rolling-back', metadata.time, seq);
      statement(db, 'UPDATE rollouts SET rollback_targets = ? WHERE rollout_id = ?').run(JSON.stringify(event.data.targets), event.data.rolloutId);
      return;
    case 'RolloutApprovalRecorded':
      // Once per approver: a projector redelivery finds it listed already.
      statement(
        db,
        `UPDATE rollouts SET approvals = json_insert(approvals, '$[#]', ?), updated_at = ?
         WHERE rollout_id = ? AND NOT EXISTS (SELECT 1 FROM json_each(rollouts.approvals) WHERE value = ?)`,
      ).run(event.data.approverId, metadata.time, event.data.rolloutId, event.data.approverId);
      return;
    case 'RolloutRejected':
      moveStatus(db, event.data.rolloutId, 'rejected', metadata.time, seq);
      statement(db, 'UPDATE rollouts SET rejected_by = ? WHERE rollout_id = ? AND seq = ?').run(event.data.approverId, event.data.rolloutId, seq);
      return;
    case 'RolloutApproved':
    case 'RolloutApprovalExpired':
    case 'RolloutPaused':
    case 'RolloutResumed':
    case 'RolloutContinued':
    case 'RolloutRolledBack':
    case 'RolloutAborted':
    case 'RolloutCompleted':
      moveStatus(db, event.data.rolloutId, statusAfter[event.type]!, metadata.time, seq);
      return;
    default:
      return;
  }
}

function moveStatus(db: Database, rolloutId: string, status: RolloutStatus, time: string, seq: number): void {
  statement(db, 'UPDATE rollouts SET status = ?, updated_at = ?, seq = ? WHERE rollout_id = ? AND seq < ?').run(status, time, seq, rolloutId, seq);
}
