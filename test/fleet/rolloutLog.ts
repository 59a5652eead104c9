import type { AssignmentState } from '../../schemas/fleet/assignmentState.ts';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import type { ApproversState } from '../../schemas/trust/approversState.ts';
import { planRollout } from '../../services/fleet/rollout/rolloutPlan.ts';

/** A host whose plan pins `module` at `version`. */
export const pinned = (nodeId: string, module: string, version: string, template: string | null = 'web'): AssignmentState => ({
  exists: true,
  nodeId,
  template,
  pins: [],
  plan: { [module]: version },
  planDigest: '0'.repeat(64),
});

/** No approver quorum: a rollout runs as it starts. */
export const noQuorum: ApproversState = { approvers: [], threshold: 0, approvalTtlSeconds: 3_600 };

/** What `fleet.startRollout` reads, for hosts all pinning nginx 1.24.0 and nginx 1.26.1 published. */
export const startInputs = (hosts: readonly string[], published = ['1.24.0', '1.26.1'], quorum = noQuorum) => ({
  publishedVersions: published,
  assignments: Object.fromEntries(hosts.map((h) => [h, pinned(h, 'nginx', '1.24.0')])),
  quorum,
});

export const options = { canarySize: 1, wavePercent: 50, maxConsecutiveFailures: 2, waveTimeoutMs: 60_000 };

/**
 * The `RolloutStarted` of nginx 1.24.0 → 1.26.1 over `hosts`, as the n-th rollout of nginx (awaiting
 * `approvalsRequired` until `approvalExpiresAt`, by default an hour after 2026-12-02T12:00Z when it awaits any).
 */
export function started(
  hosts: readonly string[],
  n = 1,
  over: Partial<typeof options> = {},
  approvalsRequired = 0,
  approvalExpiresAt: string | null = approvalsRequired > 0 ? '2026-12-02T13:00:00.000Z' : null,
): RolloutEvent {
  const o = { ...options, ...over };
  const plan = planRollout({ module: 'nginx', fromVersion: '1.24.0', toVersion: '1.26.1', hosts, ...o });
  return {
    type: 'RolloutStarted',
    data: {
      rolloutId: `nginx-${n}`,
      module: 'nginx',
      fromVersion: '1.24.0',
      toVersion: '1.26.1',
      template: null,
      waves: plan.waves,
      options: o,
      planDigest: plan.planDigest,
      approvalsRequired,
      approvalExpiresAt,
    },
  };
}

export const waveStarted = (wave: number, hosts: string[], rolloutId = 'nginx-1'): RolloutEvent => ({
  type: 'RolloutWaveStarted',
  data: { rolloutId, wave, hosts, deadline: '2026-12-02T12:01:00.000Z' },
});

export const reported = (host: string, wave: number, outcome: 'healthy' | 'failed' | 'timed-out', rolloutId = 'nginx-1'): RolloutEvent => ({
  type: 'RolloutHostReported',
  data: { rolloutId, host, wave, outcome },
});
