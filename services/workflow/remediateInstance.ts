import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT } from '../../schemas/autonomy/plan.ts';
import { RemediationInputs } from '../../schemas/metal/nodeCommands.ts';
import type { InstanceEvent } from '../../schemas/vps/events.ts';
import { RemediableInstanceState, RemediateInstance } from '../../schemas/vps/instanceRemediation.ts';
import { heldByAnother } from '../../schemas/vps/instanceState.ts';
import { reservationOf, tenantRef } from '../../schemas/vps/tenantState.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { defineCommand } from '../platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { findProfile, stepHomes } from '../plugins/profileCatalog.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryAggregate } from '../plugins/registry/registry.ts';
import { workflowIdFor } from '../metal/node/lifecycle.ts';
import { instanceAggregate } from '../vps/instance/instance.ts';

/**
 * `vps.remediateInstance` (decided on the instance, here in the engine because it reads the profile catalog, as
 * `metal.remediate` does): runs a built-in or plugin profile against a running or stopped instance as a `remediate`
 * workflow, and the instance returns to that state when the workflow completes (`InstanceRemediationCompleted`), or
 * needs attention when it fails (`InstanceRemediationFailed`). A tenant reaches only its own instances: anything else
 * is NOT_FOUND, as for an instance that does not exist. While another operation runs on the instance (a remediation,
 * or a desired state the provider has not reached) the request is refused with `INSTANCE_BUSY`; the same request
 * again (same command id, so the same workflow) is a no-op.
 */
export const remediateInstance = defineCommand({
  name: 'vps.remediateInstance',
  exposure: ['operator', 'tenant', 'engine'],
  schema: RemediateInstance,
  aggregate: instanceAggregate,
  aggregateId: (command) => command.instanceId,
  dependencies: async (command, load) => ({
    tenant: await load(tenantRef, command.tenantId),
    registry: await load(pluginRegistryAggregate, PLUGIN_REGISTRY_ID),
  }),
  decide(command, state, { commandId, dependencies: { tenant, registry } }): InstanceEvent[] {
    const { tenantId, instanceId } = command;
    const notFound = () => new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
    const reservation = reservationOf(tenant, instanceId);
    if (heldByAnother(state, tenantId) || !reservation || reservation.status === 'released') throw notFound();
    const workflowId = workflowIdFor(instanceId, commandId);
    if (state.remediation?.workflowId === workflowId) return [];
    if (state.remediation) throw new DomainError('INSTANCE_BUSY', `instance ${instanceId} is being remediated (workflow ${state.remediation.workflowId})`);
    if (state.desired === 'deleted') throw new DomainError('ILLEGAL_TRANSITION', `instance ${instanceId} is being deleted`);
    if (state.observed === 'error')
      throw new DomainError('ILLEGAL_TRANSITION', `instance ${instanceId} is in error: there is no state to return it to (delete or recreate it)`);
    // Not at rest: the reconciler is still creating, starting or stopping it, and a remediation would race with it.
    const returnTo = RemediableInstanceState.safeParse(state.desired);
    if (!returnTo.success || state.observed !== state.desired)
      throw new DomainError('INSTANCE_BUSY', `instance ${instanceId} is ${state.observed ?? 'not created yet'}, on its way to ${state.desired}`);
    const profile = findProfile(registry, command.profile);
    if (!profile) throw new DomainError('PRECONDITION_FAILED', `no profile "${command.profile}" is built in or registered`);
    const inputs: Record<string, unknown> = { ...command.inputs, profile: command.profile };
    const steps = resolveSteps(profile, inputs, stepHomes(registry));
    // An instance has no BMC and no site agent: only control-plane steps (the platform's or a plugin's) can act on it.
    const elsewhere = steps.filter((s) => s.runsOn !== 'control-plane');
    if (elsewhere.length > 0)
      throw new DomainError(
        'UNSUPPORTED',
        `profile "${profile.id}" has steps that run on a site or node (${elsewhere.map((s) => s.id).join(', ')}); an instance runs control-plane steps only`,
      );
    const destructive = steps.filter((s) => s.destructive);
    if (destructive.length > 0 && !command.allowDestructive)
      throw new DomainError(
        'NOT_PERMITTED',
        `profile "${profile.id}" has destructive steps (${destructive.map((s) => s.id).join(', ')}) and this remediation may not destroy`,
      );
    const approved = command.approvedPlanDigest ? { [PLAN_DIGEST_INPUT]: command.approvedPlanDigest, [PLAN_ACTION_INPUT]: 'vps.remediateInstance' } : {};
    return [
      {
        type: 'InstanceRemediationRequested',
        data: {
          instanceId,
          tenantId,
          poolId: reservation.poolId,
          workflowId,
          profile: profile.id,
          returnTo: returnTo.data,
          inputs: { ...inputs, [RemediationInputs.returnTo]: returnTo.data, [RemediationInputs.allowDestructive]: command.allowDestructive, ...approved },
        },
      },
    ];
  },
});
