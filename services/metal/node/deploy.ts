import { DeployNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { requestOperation, requireNode, requireState, requireTenantAccess } from './lifecycle.ts';
import { isAgentless, nodeAggregate } from './node.ts';

/**
 * The operator verbs. A verb repeated while its operation is already under way is a no-op, so a client retry after
 * the command-id memory still does not start a second workflow.
 */
export const deployNode = defineCommand({
  name: 'metal.deploy',
  exposure: ['operator', 'tenant'],
  schema: DeployNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    requireTenantAccess(node, command.tenantId, { claimUnowned: true });
    const same =
      node.current?.operation === 'deploy' && node.current.inputs.imageSha256 === command.imageSha256 && node.current.inputs.profile === command.profile;
    if (same) return [];
    requireState(node, 'metal.deploy', ['ready']);
    // The built-in deploy is the image-stream driver's: it writes the image from the ramdisk, which a node whose
    // hardware profile (or pool) deploys agentless never boots.
    if (isAgentless(node) && command.profile === undefined) {
      throw new DomainError(
        'UNSUPPORTED',
        `node ${node.nodeId} deploys agentless (hardware profile ${node.hardwareProfile}${node.poolId ? `, pool ${node.poolId}` : ''}); deploy it with a profile that needs no agent (e.g. talos-1.8)`,
      );
    }
    const { nodeId: _nodeId, tenantId, inputs: extra, ...inputs } = command;
    return requestOperation(node, 'deploy', { ...extra, ...inputs }, commandId, tenantId);
  },
});
