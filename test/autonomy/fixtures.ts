import type { DecisionEvent } from '../../schemas/autonomy/decisionEvents.ts';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { planDigestOf, type RemediationPlan } from '../../schemas/autonomy/plan.ts';
import type { PolicyDeclaration } from '../../schemas/autonomy/policies.ts';
import type { Signal } from '../../schemas/autonomy/signals.ts';
import { emptyFleetSnapshot, type FleetSnapshot, type SnapshotNode } from '../../schemas/autonomy/snapshot.ts';
import { builtinPolicies } from '../../services/autonomy/policies.ts';
import type { ControlsState } from '../../services/autonomy/controls/controls.ts';

export const NOW = '2026-12-02T12:00:00.000Z';
export const policyOf = (category: string): PolicyDeclaration => builtinPolicies.find((p) => p.category === category)!;
export const noControls: ControlsState = { overrides: {}, paused: [], halted: false };

export const failedSignal = (nodeId = 'n1', detail = 'deploy failed at image.write: boom'): Signal => ({
  kind: 'node-failed',
  sensor: 'node-state',
  key: nodeId,
  target: { type: 'node', id: nodeId },
  siteId: 'dc1',
  facts: { operation: 'deploy' },
  detail,
  controlPlane: false,
});
export const retryPlan = (nodeId = 'n1'): RemediationPlan => ({ action: 'metal.retry', target: { type: 'node', id: nodeId }, params: { operation: 'deploy' } });
export const openRetry = (nodeId = 'n1', passId = 'p1', detail?: string) => ({
  category: 'retry',
  key: nodeId,
  passId,
  signal: failedSignal(nodeId, detail),
  policy: policyOf('retry'),
  plan: retryPlan(nodeId),
});

/** The DecisionOpened event `openRetry` gives on a fresh key with default controls. */
export function openedRetry(nodeId = 'n1', episode = 1, expiresAt = '2026-12-02T16:00:00.000Z'): DecisionEvent {
  const o = openRetry(nodeId);
  return {
    type: 'DecisionOpened',
    data: {
      decisionId: decisionIdOf('retry', nodeId),
      episode,
      category: 'retry',
      key: nodeId,
      passId: 'p1',
      signal: o.signal,
      policy: o.policy,
      disposition: 'require',
      dispositionReason: null,
      plan: o.plan,
      planDigest: planDigestOf(o.plan),
      expiresAt,
    },
  };
}

export const emptySnapshot = (at = NOW): FleetSnapshot => emptyFleetSnapshot(at);

/** A deployed host running `bcd`, last changed an hour before NOW: what the host sensors judge. */
export const deployedHost = (nodeId: string, over: Partial<SnapshotNode> = {}): SnapshotNode => ({
  nodeId,
  siteId: 'dc1',
  state: 'deployed',
  maintenance: false,
  maintenanceSource: null,
  failure: null,
  waitingReason: null,
  updatedAt: new Date(Date.parse(NOW) - 3_600_000).toISOString(),
  agent: 'bcd',
  controlPlane: false,
  ...over,
});
