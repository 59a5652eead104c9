import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT } from '../../schemas/autonomy/plan.ts';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { RemediateNode, RemediationInputs } from '../../schemas/metal/nodeCommands.ts';
import { remediableStates } from '../../schemas/metal/nodeState.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { defineCommand } from '../platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { findProfile, stepHomes } from '../plugins/profileCatalog.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryAggregate } from '../plugins/registry/registry.ts';
import { requestOperation, requireNode, requireState } from '../metal/node/lifecycle.ts';
import { nodeAggregate } from '../metal/node/node.ts';

/**
 * `metal.remediate` (decided on the node, here in the engine because it reads the profile catalog, as `workflow.start` does): runs a built-in or plugin profile on a ready or deployed node as the `remediate` operation, and
 * the node returns to that state when the workflow completes (`NodeOperationCompleted.state`). The state it returns
 * to travels in the operation's inputs, so a `metal.retry` of a failed remediation still returns there. A profile
 * with a destructive step is refused unless the request allows destruction (`NOT_PERMITTED`): the autonomy engine
 * allows it only for categories declared destructive; `workflow.start` checks it again on the steps it freezes.
 */
export const remediateNode = defineCommand({
  name: 'metal.remediate',
  exposure: ['operator', 'engine'],
  schema: RemediateNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (_command, load) => load(pluginRegistryAggregate, PLUGIN_REGISTRY_ID),
  decide(command, state, { commandId, dependencies: registry }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.current?.operation === 'remediate' && node.current.inputs.profile === command.profile) return [];
    requireState(node, 'metal.remediate', remediableStates);
    const profile = findProfile(registry, command.profile);
    if (!profile) throw new DomainError('PRECONDITION_FAILED', `no profile "${command.profile}" is built in or registered`);
    const inputs: Record<string, unknown> = { ...command.inputs, profile: command.profile };
    const destructive = resolveSteps(profile, inputs, stepHomes(registry)).filter((s) => s.destructive);
    if (destructive.length > 0 && !command.allowDestructive) {
      throw new DomainError(
        'NOT_PERMITTED',
        `profile "${profile.id}" has destructive steps (${destructive.map((s) => s.id).join(', ')}) and this remediation may not destroy`,
      );
    }
    const approved = command.approvedPlanDigest ? { [PLAN_DIGEST_INPUT]: command.approvedPlanDigest, [PLAN_ACTION_INPUT]: 'metal.remediate' } : {};
    const returnTo = node.state as (typeof remediableStates)[number];
    return requestOperation(
      node,
      'remediate',
      { ...inputs, [RemediationInputs.returnTo]: returnTo, [RemediationInputs.allowDestructive]: command.allowDestructive, ...approved },
      commandId,
    );
  },
});
