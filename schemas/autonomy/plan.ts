import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../canonicalJson.ts';
import { SignalTarget } from './signals.ts';

/**
 * The resolved remediation a decision would run: what, on what, with which parameters. Approvers approve its digest,
 * and the start of its workflow checks that digest again, so "approve X, run Y" cannot happen.
 */
export const RemediationPlan = z
  .object({
    action: z.enum([
      'none',
      'metal.bmcMaintenance',
      'metal.retry',
      'metal.remediate',
      'vps.remediateInstance',
      'vps.recreate',
      'vps.relocate',
      'agent.rotateKey',
    ]),
    target: SignalTarget,
    params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  })
  .strict();
export type RemediationPlan = z.infer<typeof RemediationPlan>;

/** SHA-256 (hex) of the plan as canonical JSON: field order never changes it. */
export const planDigestOf = (plan: RemediationPlan): string => createHash('sha256').update(canonicalJson(plan)).digest('hex');

/**
 * The inputs key under which an autonomy remediation passes its approved digest to `workflow.start`, with the action
 * it approved. `workflow.start` recomputes the digest of `{ action, target: node, params: { operation } }`, or for a
 * remediation `{ action, target: node, params: { profile } }` (`workflowPlan`).
 */
export const PLAN_DIGEST_INPUT = 'autonomyPlanDigest';
export const PLAN_ACTION_INPUT = 'autonomyPlanAction';

/** The plan a node operation runs, as `workflow.start` sees it. */
export const nodeOperationPlan = (action: RemediationPlan['action'], nodeId: string, operation: string): RemediationPlan => ({
  action,
  target: { type: 'node', id: nodeId },
  params: { operation },
});

/** The plan a profile remediation runs: the profile is what approvers approve. */
export const remediationPlan = (nodeId: string, profile: string): RemediationPlan => ({
  action: 'metal.remediate',
  target: { type: 'node', id: nodeId },
  params: { profile },
});

/** The plan a profile remediation of a VPS instance runs (`vps.remediateInstance`). */
export const instanceRemediationPlan = (instanceId: string, profile: string): RemediationPlan => ({
  action: 'vps.remediateInstance',
  target: { type: 'instance', id: instanceId },
  params: { profile },
});

/** The plan a workflow about to start carries out, as its approval named it (`nodeId` is the instance's id for an instance). */
export const workflowPlan = (
  action: RemediationPlan['action'],
  nodeId: string,
  operation: string,
  inputs: Readonly<Record<string, unknown>>,
): RemediationPlan => {
  const profile = typeof inputs.profile === 'string' ? inputs.profile : '';
  if (action === 'metal.remediate') return remediationPlan(nodeId, profile);
  if (action === 'vps.remediateInstance') return instanceRemediationPlan(nodeId, profile);
  return nodeOperationPlan(action, nodeId, operation);
};
