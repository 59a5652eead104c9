import type { Database } from 'better-sqlite3';
import type { RolloutDetailView, RolloutStatus, RolloutView } from '../../schemas/fleet/rolloutViews.ts';
import type { HostOutcome } from '../../schemas/fleet/rolloutWaves.ts';

interface RolloutRow {
  rollout_id: string;
  module: string;
  from_version: string;
  to_version: string;
  template: string | null;
  status: RolloutStatus;
  plan_digest: string;
  approvals_required: number;
  approvals: string;
  approval_expires_at: string | null;
  rejected_by: string | null;
  options: string;
  wave_count: number;
  started_waves: number;
  host_count: number;
  halt: string | null;
  rollback_targets: string | null;
  started_at: string;
  started_by: string;
  updated_at: string;
}

interface HostRow {
  host: string;
  wave: number;
  outcome: HostOutcome | null;
  restored: HostOutcome | null;
}

const rolloutView = (r: RolloutRow): RolloutView => ({
  rolloutId: r.rollout_id,
  module: r.module,
  fromVersion: r.from_version,
  toVersion: r.to_version,
  template: r.template,
  status: r.status,
  planDigest: r.plan_digest,
  approvalsRequired: r.approvals_required,
  approvals: JSON.parse(r.approvals) as string[],
  approvalExpiresAt: r.approval_expires_at,
  rejectedBy: r.rejected_by,
  options: JSON.parse(r.options) as RolloutView['options'],
  waveCount: r.wave_count,
  startedWaves: r.started_waves,
  hostCount: r.host_count,
  halt: r.halt === null ? null : (JSON.parse(r.halt) as RolloutView['halt']),
  rollbackTargets: r.rollback_targets === null ? null : (JSON.parse(r.rollback_targets) as string[]),
  startedAt: r.started_at,
  startedBy: r.started_by,
  updatedAt: r.updated_at,
});

/** Rollouts, newest first; of one module or in one status when asked. */
export function listRollouts(db: Database, filter: { module?: string; status?: RolloutStatus } = {}): RolloutView[] {
  const rows = db
    .prepare(
      `SELECT * FROM rollouts WHERE (@module IS NULL OR module = @module) AND (@status IS NULL OR status = @status)
       ORDER BY started_at DESC, rollout_id DESC`,
    )
    .all({ module: filter.module ?? null, status: filter.status ?? null }) as RolloutRow[];
  return rows.map(rolloutView);
}

/** One rollout with its waves (in order, each with its deadline once started) and each host's outcome. */
export function getRollout(db: Database, rolloutId: string): RolloutDetailView | undefined {
  const row = db.prepare('SELECT * FROM rollouts WHERE rollout_id = ?').get(rolloutId) as RolloutRow | undefined;
  if (!row) return undefined;
  const waves = db.prepare('SELECT wave, deadline FROM rollout_waves WHERE rollout_id = ? ORDER BY wave').all(rolloutId) as {
    wave: number;
    deadline: string | null;
  }[];
  const hosts = db.prepare('SELECT host, wave, outcome, restored FROM rollout_hosts WHERE rollout_id = ? ORDER BY position').all(rolloutId) as HostRow[];
  return {
    ...rolloutView(row),
    waves: waves.map((w) => ({ wave: w.wave, deadline: w.deadline, hosts: hosts.filter((h) => h.wave === w.wave) })),
  };
}

/** The hosts whose plan pins `module` at `version` (of `template`, when given), in node-id order: a rollout's default hosts. */
export function hostsRunning(db: Database, module: string, version: string, template?: string): string[] {
  const rows = db
    .prepare(
      `SELECT node_id FROM host_assignments WHERE json_extract(plan, '$.' || json_quote(@module)) = @version
         AND (@template IS NULL OR template = @template) ORDER BY node_id`,
    )
    .all({ module, version, template: template ?? null }) as { node_id: string }[];
  return rows.map((r) => r.node_id);
}
