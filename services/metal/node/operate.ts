import { DeployNode, RescueNode, RetireNode, RetryNode, StartInspection, UndeployNode, UnrescueNode } from '../../../schemas/metal/lifecycleCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT } from '../../../schemas/autonomy/plan.ts';
import { defineCommand } from '../../commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { requestOperation, requireNode, requireState, requireTenantAccess } from './lifecycle.ts';
import type { AggregateLoader } from '../../commands/commandDefinition.ts';
import { poolAggregate } from '../../vps/pool/pool.ts';
import { AGENTLESS_INPUT, WIPE_METHOD_INPUT } from '../profiles/builtin.ts';
import { isAgentless, nodeAggregate, type NodeAggregateState } from './node.ts';

/** The inputs of an erasing operation (release, retire): how the node's pool wipes, or that no ramdisk ever boots. */
async function erasingInputs(nodeId: string, load: AggregateLoader): Promise<Record<string, unknown>> {
  const node: NodeAggregateState = await load(nodeAggregate, nodeId);
  if (!node.exists) return {};
  // No ramdisk ever boots on an agentless node: `workflow.start` picks the built-in profile that only acts over Redfish.
  if (isAgentless(node)) return { [AGENTLESS_INPUT]: true };
  const pool = node.poolId === undefined ? undefined : await load(poolAggregate, node.poolId);
  const wipeMethod = pool?.exists ? pool.policy.wipeMethod : undefined;
  return wipeMethod ? { [WIPE_METHOD_INPUT]: wipeMethod } : {};
}

/**
 * The operator verbs. A verb repeated while its operation is already under way is a no-op, so a client retry after
 * the command-id memory still does not start a second workflow.
 */
export const deployNode = defineCommand({
  name: 'metal.deploy',
  schema: DeployNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: true });
    const same = node.current?.operation === 'deploy' && node.current.inputs.imageSha256 === command.imageSha256 && node.current.inputs.profile === command.profile;
    if (same) return [];
    requireState(node, 'metal.deploy', ['ready'], { inService: true });
    // The built-in deploy writes the image from the ramdisk, which an agentless machine never boots.
    if (isAgentless(node) && command.profile === undefined) {
      throw new DomainError('UNSUPPORTED', `node ${node.nodeId} is in an agentless pool; deploy it with a profile that needs no agent (e.g. talos-1.8)`);
    }
    const { nodeId: _nodeId, tenantId, inputs: extra, ...inputs } = command;
    return requestOperation(node, 'deploy', { ...extra, ...inputs }, commandId, tenantId);
  },
});

export const undeployNode = defineCommand({
  name: 'metal.undeploy',
  schema: UndeployNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (command, load) => ({ inputs: await erasingInputs(command.nodeId, load) }),
  decide(command, state, { commandId, dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: false });
    if (node.current?.operation === 'release') return [];
    requireState(node, 'metal.undeploy', ['deployed']);
    return requestOperation(node, 'release', dependencies.inputs, commandId);
  },
});

export const rescueNode = defineCommand({
  name: 'metal.rescue',
  schema: RescueNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: true });
    if (node.state === 'rescuing' || node.state === 'rescue') return [];
    // Rescue boots the bcd ramdisk, which an agentless pool's nodes never run.
    if (isAgentless(node)) throw new DomainError('UNSUPPORTED', `node ${node.nodeId} is in an agentless pool; rescue needs the bcd ramdisk`);
    requireState(node, 'metal.rescue', ['ready', 'deployed']);
    return requestOperation(node, 'rescue', {}, commandId, command.tenantId);
  },
});

export const unrescueNode = defineCommand({
  name: 'metal.unrescue',
  schema: UnrescueNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: false });
    requireState(node, 'metal.unrescue', ['rescue']);
    return [{ type: 'NodeRescueEnded', data: { nodeId: node.nodeId } }];
  },
});

export const retireNode = defineCommand({
  name: 'metal.retire',
  schema: RetireNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (command, load) => ({ inputs: await erasingInputs(command.nodeId, load) }),
  decide(command, state, { commandId, dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.state === 'retired' || node.current?.operation === 'retire') return [];
    requireState(node, 'metal.retire', ['enrolled', 'ready', 'failed']);
    return requestOperation(node, 'retire', dependencies.inputs, commandId);
  },
});

/** Runs the failed operation again, as a new workflow with the same inputs. */
export const retryNode = defineCommand({
  name: 'metal.retry',
  schema: RetryNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireState(node, 'metal.retry', ['failed']);
    if (!node.failed) throw new DomainError('ILLEGAL_TRANSITION', `node ${node.nodeId} has no failed operation to retry`);
    const approved = command.approvedPlanDigest ? { [PLAN_DIGEST_INPUT]: command.approvedPlanDigest, [PLAN_ACTION_INPUT]: 'metal.retry' } : {};
    return requestOperation(node, node.failed.operation, { ...node.failed.inputs, ...approved }, commandId);
  },
});

export const startInspection = defineCommand({
  name: 'metal.startInspection',
  schema: StartInspection,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.current?.operation === 'inspect') return [];
    requireState(node, 'metal.startInspection', ['enrolled']);
    return requestOperation(node, 'inspect', {}, commandId);
  },
});
