import { StartInspection } from '../../../schemas/metal/nodeCommands.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { IN_BAND_INPUT } from '../profiles/builtin.ts';
import { requestOperation, requireNode, requireState } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

export const startInspection = defineCommand({
  name: 'metal.startInspection',
  exposure: ['engine'],
  schema: StartInspection,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state, { commandId }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.current?.operation === 'inspect') return [];
    requireState(node, 'metal.startInspection', ['enrolled']);
    return requestOperation(node, 'inspect', node.inspectInBand ? { [IN_BAND_INPUT]: true } : {}, commandId);
  },
});
