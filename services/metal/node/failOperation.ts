import { FailOperation } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { erasingOperations } from '../../../schemas/metal/workflow.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { requireCurrentWorkflow, requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

export const failOperation = defineCommand({
  name: 'metal.failOperation',
  exposure: ['engine'],
  schema: FailOperation,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.state === 'failed' && node.failed?.workflowId === command.workflowId) return [];
    const current = requireCurrentWorkflow(node, command.workflowId);
    return [
      {
        type: 'NodeOperationFailed',
        data: {
          nodeId: node.nodeId,
          operation: current.operation,
          workflowId: command.workflowId,
          reason: command.reason,
          failedStep: command.failedStep,
          // Whatever failed in a release or retirement, the disks' contents are unknown: keep the node out of service. A
          // contested boot means something other than the machine took part in it: nobody trusts the node until looked at.
          maintenance: erasingOperations.has(current.operation) || command.code === 'BOOT_CONTESTED',
        },
      },
    ];
  },
});
