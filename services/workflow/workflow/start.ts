import { createHash } from 'node:crypto';
import { currentQuorum } from '../../../schemas/trust/approversState.ts';
import { StartWorkflow } from '../../../schemas/metal/workflowCommands.ts';
import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT, planDigestOf, RemediationPlan, workflowPlan } from '../../../schemas/autonomy/plan.ts';
import { RemediationInputs } from '../../../schemas/metal/nodeCommands.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { resolveSteps } from '../../../plugins/sdk/defineProfile.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { findProfile, stepHomes, validateProfile } from '../../plugins/profileCatalog.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryAggregate } from '../../plugins/registry/registry.ts';
import { builtinProfileFor } from '../../metal/profiles/builtin.ts';
import { workflowAggregate } from './workflow.ts';

/**
 * A workflow an approval started must be the plan approved: its digest, recomputed from what this workflow runs
 * (action, node, operation), must equal the digest the approvers signed. "Approve X, run Y" is refused here.
 */
function requireApprovedPlan(command: StartWorkflow): void {
  const approved = command.inputs[PLAN_DIGEST_INPUT];
  if (approved === undefined) return;
  const action = command.inputs[PLAN_ACTION_INPUT];
  const parsed = RemediationPlan.shape.action.safeParse(action);
  const digest = parsed.success ? planDigestOf(workflowPlan(parsed.data, command.nodeId, command.operation, command.inputs)) : undefined;
  if (digest !== approved) {
    throw new DomainError('PLAN_DIGEST_MISMATCH', `workflow ${command.workflowId} (${command.operation} on ${command.nodeId}) is not the plan approved`);
  }
}

/**
 * `workflow.start`: resolve the operation's profile (the one the request named in `inputs.profile`, else the built-in
 * one), freeze its steps into the log and schedule the first one. A named profile must exist, implement this
 * operation and validate against the steps registered now.
 */
export const startWorkflow = defineCommand({
  name: 'workflow.start',
  exposure: ['engine'],
  schema: StartWorkflow,
  aggregate: workflowAggregate,
  aggregateId: (command) => command.workflowId,
  dependencies: async (_command, load) => ({
    quorum: await currentQuorum(load),
    registry: await load(pluginRegistryAggregate, PLUGIN_REGISTRY_ID),
  }),
  decide(command, state, { now, dependencies }): WorkflowEvent[] {
    // Started already, or cancelled before it could start.
    if (state.exists || state.cancelled) return [];
    requireApprovedPlan(command);
    const { registry } = dependencies;
    const named = typeof command.inputs.profile === 'string' ? command.inputs.profile : undefined;
    const profile = named ? findProfile(registry, named) : builtinProfileFor(command.operation, command.inputs);
    if (!profile) throw new DomainError('PRECONDITION_FAILED', `no profile "${named}" is built in or registered`);
    // A remediation runs any profile (and returns the node where it was); every other operation runs its own role's.
    if (command.operation !== 'remediate' && profile.role !== command.operation)
      throw new DomainError('PRECONDITION_FAILED', `profile "${profile.id}" is for ${profile.role}, not ${command.operation}`);
    const issues = validateProfile(registry, profile);
    if (issues.length > 0)
      throw new DomainError('PRECONDITION_FAILED', `profile "${profile.id}" does not validate: ${issues.map((i) => i.message).join('; ')}`);
    const steps = resolveSteps(profile, command.inputs, stepHomes(registry));
    // Checked again here, on the steps that will run: the profile may have changed since the remediation was requested.
    if (command.operation === 'remediate' && command.inputs[RemediationInputs.allowDestructive] !== true && steps.some((s) => s.destructive))
      throw new DomainError('PRECONDITION_FAILED', `profile "${profile.id}" has a destructive step and this remediation may not destroy`);
    // Checked again too: an instance has neither BMC nor site agent, and the profile may have gained such a step.
    if (command.instance && steps.some((s) => s.runsOn !== 'control-plane'))
      throw new DomainError(
        'PRECONDITION_FAILED',
        `profile "${profile.id}" has a step that runs on a site or node, and this workflow runs against an instance`,
      );
    const { workflowId, nodeId, siteId, operation, instance } = command;
    const events: WorkflowEvent[] = [
      {
        type: 'WorkflowStarted',
        data: {
          workflowId,
          nodeId,
          siteId,
          operation,
          profile: { id: profile.id, version: profile.version },
          steps,
          startedAt: now,
          ...(instance ? { instance } : {}),
        },
      },
    ];
    const { quorum } = dependencies;
    const items = steps.flatMap((s, stepIndex) => (s.destructive ? [{ stepIndex, stepId: s.id }] : []));
    if (quorum.threshold > 0 && items.length > 0) {
      // The digest covers the params too: approvers approve this image on this node, not "a deploy".
      const digest = createHash('sha256')
        .update(JSON.stringify({ workflowId, nodeId, siteId, operation, items: items.map((i) => ({ ...i, params: steps[i.stepIndex]!.params })) }))
        .digest('hex');
      const expiresAt = new Date(Date.parse(now) + quorum.approvalTtlSeconds * 1000).toISOString();
      const approverIds = quorum.approvers.map((a) => a.approverId);
      events.push({ type: 'ApprovalRequested', data: { workflowId, digest, items, threshold: quorum.threshold, approverIds, expiresAt } });
    }
    events.push({ type: 'StepScheduled', data: { workflowId, stepIndex: 0, stepId: steps[0]!.id, attempt: 1 } });
    return events;
  },
});
