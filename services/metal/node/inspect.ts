import { InspectNode } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { IN_BAND_INPUT } from '../profiles/builtin.ts';
import { requestOperation, requireNode, requireState } from './lifecycle.ts';
import { isAgentless, nodeAggregate } from './node.ts';

/**
 * `metal.inspect`: inspects a resting node again. In band (the default), the machine is power-cycled into the ramdisk
 * and left off: nothing on its disks is touched, but whatever ran on it stops, so only nodes nobody uses qualify
 * (`ready`, or `failed` at an inspection).
 */
export const inspectNode = defineCommand({
  name: 'metal.inspect',
  exposure: ['operator'],
  schema: InspectNode,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.state === 'inspecting') return [];
    if (command.inBand && isAgentless(node))
      throw new DomainError('UNSUPPORTED', `node ${node.nodeId} is in an agentless pool; an in-band inspection needs the bcd ramdisk`);
    // An inspection ends in `ready`: from a failed deploy or release that would hand out a machine nobody wiped.
    const failedInspection = node.state === 'failed' && node.failed?.operation === 'inspect';
    if (!failedInspection) requireState(node, 'metal.inspect', ['ready']);
    return requestOperation(node, 'inspect', command.inBand ? { [IN_BAND_INPUT]: true } : {}, commandId);
  },
});
