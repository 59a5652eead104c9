import { setTimeout as sleep } from 'node:timers/promises';
import type { RolloutDetailView, RolloutHostView, RolloutStatus } from '../../schemas/fleet/rolloutViews.ts';
import type { ApiClient } from './apiClient.ts';

/**
 * The exit code a followed rollout ends with, by the status it stopped in: 0 completed, 3 halted (waits for an
 * operator: continue, rollback or abort), 4 rolled back, 5 aborted. 1 and 2 stay the CLI's refusal and server error.
 */
export const followExitCodes: Readonly<Partial<Record<RolloutStatus, number>>> = {
  completed: 0,
  halted: 3,
  'rolled-back': 4,
  aborted: 5,
  rejected: 6,
  'approval-expired': 7,
};

/** Where `--follow` stops: an end, or a halt (nothing moves until an operator acts). Paused and awaiting approval go on. */
export const followEnds = (status: RolloutStatus): boolean => followExitCodes[status] !== undefined;

const hostsOf = (view: RolloutDetailView) => new Map(view.waves.flatMap((w) => w.hosts.map((h) => [h.host, h] as const)));

/**
 * What changed between two reads of a rollout, one line each, in the order it happens: approvals, a status that starts
 * something, waves started, hosts' outcomes, rollback restores, then a halt (with its reason) or an end. `before` undefined: the first read, described whole.
 */
export function rolloutChanges(before: RolloutDetailView | undefined, after: RolloutDetailView): string[] {
  const id = after.rolloutId;
  const lines: string[] = [];
  if (before === undefined) {
    lines.push(
      `${id}: ${after.module} ${after.fromVersion} → ${after.toVersion}, ${after.hostCount} host(s) in ${after.waveCount} wave(s), plan ${after.planDigest}`,
    );
  }
  for (const approver of after.approvals.filter((a) => !before?.approvals.includes(a))) {
    lines.push(`${id}: approved by ${approver} (${after.approvals.indexOf(approver) + 1}/${after.approvalsRequired})`);
  }
  let status: string | undefined;
  if (before?.status !== after.status) {
    const halt =
      after.status === 'halted' && after.halt
        ? `: ${after.halt.reason} (failed: ${after.halt.failed.join(', ') || 'none'})`
        : after.status === 'rejected' && after.rejectedBy !== null
          ? ` by ${after.rejectedBy}`
          : after.status === 'approval-expired' && after.approvalExpiresAt !== null
            ? ` at ${after.approvalExpiresAt} (${after.approvals.length}/${after.approvalsRequired} approvals)`
            : '';
    status = `${id}: ${after.status}${halt}`;
    // A status that lets waves or restores start comes before them; a halt or an end comes after the reports behind it.
    if (!followEnds(after.status)) lines.push(status);
  }
  const was: ReadonlyMap<string, RolloutHostView> = before === undefined ? new Map() : hostsOf(before);
  for (const wave of after.waves) {
    const earlier = before?.waves[wave.wave];
    if (wave.deadline !== null && earlier?.deadline == null) {
      lines.push(
        `${id}: wave ${wave.wave}${wave.wave === 0 ? ' (canary)' : ''} started: ${wave.hosts.map((h) => h.host).join(', ')} (deadline ${wave.deadline})`,
      );
    }
    for (const host of wave.hosts) {
      if (host.outcome !== null && was.get(host.host)?.outcome == null) lines.push(`${id}: ${host.host} (wave ${wave.wave}) ${host.outcome}`);
      if (host.restored !== null && was.get(host.host)?.restored == null) lines.push(`${id}: ${host.host} restored to ${after.fromVersion}: ${host.restored}`);
    }
  }
  if (status !== undefined && followEnds(after.status)) lines.push(status);
  return lines;
}

/**
 * Follows a rollout by reading it (`GET /v1/rollouts/:id`) every `pollMs` until it ends or halts, writing each change
 * as a line; resolves the last view. Polling the read model, as `workflows show --follow` does: a read missed between
 * two polls is folded into the next one's differences, so nothing is lost the way a dropped stream event would be.
 * `minSeq`: the command just sent (a rollback) is read, not the halt before it, which would end the follow at once.
 */
export async function followRollout(
  api: ApiClient,
  rolloutId: string,
  write: (line: string) => void,
  options: { pollMs?: number; timeoutMs?: number; minSeq?: number } = {},
): Promise<RolloutDetailView> {
  const deadline = Date.now() + (options.timeoutMs ?? 24 * 3_600_000);
  let seen: RolloutDetailView | undefined;
  for (;;) {
    const after = seen === undefined && options.minSeq !== undefined ? `?minSeq=${options.minSeq}` : '';
    const view = await api.get<RolloutDetailView>(`/v1/rollouts/${encodeURIComponent(rolloutId)}${after}`).catch((err: { code?: string }) => {
      if (err.code === 'NOT_FOUND') return undefined; // just started: not projected yet
      throw err;
    });
    if (view) {
      for (const line of rolloutChanges(seen, view)) write(`${new Date().toISOString()} ${line}`);
      seen = view;
      if (followEnds(view.status)) return view;
    }
    if (Date.now() > deadline) throw new Error(`rollout ${rolloutId} still ${seen?.status ?? 'unknown'} after the wait limit`);
    await sleep(options.pollMs ?? 500);
  }
}
