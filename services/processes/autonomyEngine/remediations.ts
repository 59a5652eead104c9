import type { ExistingDecision } from '../../autonomy/decision/decision.ts';
import type { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { instanceAggregate } from '../../vps/instance/instance.ts';
import { recreateCommands } from './recreate.ts';

export interface RemediationCommand {
  readonly name: string;
  readonly payload: Record<string, unknown>;
}

/**
 * The commands that carry out an approved plan, in order, or undefined when there is nothing this control plane can
 * run for it (`none`, or a target that no longer exists). Each is sent with an id derived from decision, episode and
 * its place in the list, so a retried start sends the same commands again and the log keeps one of each.
 */
export async function remediationCommands(decision: ExistingDecision, repository: AggregateRepository): Promise<RemediationCommand[] | undefined> {
  const { plan } = decision;
  switch (plan.action) {
    case 'metal.bmcMaintenance':
      return [{ name: 'metal.reportBmcHealth', payload: { nodeId: plan.target.id, reachable: false, detail: decision.signal.detail } }];
    case 'metal.retry':
      // The approved digest travels with the workflow: `workflow.start` refuses anything but this plan.
      return [{ name: 'metal.retry', payload: { nodeId: plan.target.id, approvedPlanDigest: decision.planDigest } }];
    case 'metal.remediate':
      // A lane whose plan is a profile: it runs as `metal.remediate`, which may destroy only if the category is destructive.
      return [
        {
          name: 'metal.remediate',
          payload: {
            nodeId: plan.target.id,
            profile: String(plan.params.profile),
            allowDestructive: decision.policy.kind === 'destructive',
            approvedPlanDigest: decision.planDigest,
          },
        },
      ];
    case 'vps.remediateInstance': {
      // The instance's own tenant is who it is remediated for: the decider then allows only that tenant's instance.
      const { tenantId } = (await repository.load(instanceAggregate, plan.target.id)).state;
      if (tenantId === null) return undefined;
      return [
        {
          name: 'vps.remediateInstance',
          payload: {
            tenantId,
            instanceId: plan.target.id,
            profile: String(plan.params.profile),
            allowDestructive: decision.policy.kind === 'destructive',
            approvedPlanDigest: decision.planDigest,
          },
        },
      ];
    }
    case 'vps.recreate':
      return recreateCommands(repository, decision);
    case 'vps.relocate': {
      // Placed again by the reconciler on the site's book; the instance's own tenant, read from the instance.
      const { tenantId } = (await repository.load(instanceAggregate, plan.target.id)).state;
      if (tenantId === null) return undefined;
      const payload = {
        siteId: String(plan.params.siteId),
        tenantId,
        instanceId: plan.target.id,
        fromNodeId: String(plan.params.fromNodeId),
        reason: decision.signal.detail,
        approvedPlanDigest: decision.planDigest,
      };
      return [{ name: 'vps.requestRelocation', payload }];
    }
    case 'agent.rotateKey':
      return [{ name: 'agent.rotateKey', payload: { agentId: plan.target.id, reason: decision.signal.detail } }];
    case 'none':
      return undefined;
  }
}

/** The command that undoes a holding action once its signal is gone (BMC maintenance clears; an operator's never). */
export function clearanceCommand(decision: ExistingDecision): RemediationCommand | undefined {
  if (decision.plan.action !== 'metal.bmcMaintenance') return undefined;
  return { name: 'metal.reportBmcHealth', payload: { nodeId: decision.plan.target.id, reachable: true } };
}

/** Holding actions stay in force while their signal lasts: they are judged when it ends, not after the settle window. */
export const isHoldingAction = (decision: ExistingDecision) => decision.plan.action === 'metal.bmcMaintenance';
