import type { ExistingDecision } from '../../autonomy/decision/decision.ts';

/** The command that carries out an approved plan, or undefined for actions this control plane cannot run yet. */
export function remediationCommand(decision: ExistingDecision): { name: string; payload: Record<string, unknown> } | undefined {
  const { plan } = decision;
  switch (plan.action) {
    case 'metal.bmcMaintenance':
      return { name: 'metal.reportBmcHealth', payload: { nodeId: plan.target.id, reachable: false, detail: decision.signal.detail } };
    case 'metal.retry':
      // The approved digest travels with the workflow: `workflow.start` refuses anything but this plan.
      return { name: 'metal.retry', payload: { nodeId: plan.target.id, approvedPlanDigest: decision.planDigest } };
    case 'metal.remediate':
      // A lane whose plan is a profile: it runs as `metal.remediate`, which may destroy only if the category is destructive.
      return {
        name: 'metal.remediate',
        payload: {
          nodeId: plan.target.id,
          profile: String(plan.params.profile),
          allowDestructive: decision.policy.kind === 'destructive',
          approvedPlanDigest: decision.planDigest,
        },
      };
    default:
      // `vps.recreate` and `agent.rotateKey` are decided and approved, but not carried out yet (see ARCHITECTURE.md).
      return undefined;
  }
}

/** The command that undoes a holding action once its signal is gone (BMC maintenance clears; an operator's never). */
export function clearanceCommand(decision: ExistingDecision): { name: string; payload: Record<string, unknown> } | undefined {
  if (decision.plan.action !== 'metal.bmcMaintenance') return undefined;
  return { name: 'metal.reportBmcHealth', payload: { nodeId: decision.plan.target.id, reachable: true } };
}

/** Holding actions stay in force while their signal lasts: they are judged when it ends, not after the settle window. */
export const isHoldingAction = (decision: ExistingDecision) => decision.plan.action === 'metal.bmcMaintenance';
