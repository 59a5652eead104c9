import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { SetLabels } from '../../../schemas/metal/nodeCommands.ts';
import { isDerivedLabelKey, NodeLabels } from '../../../schemas/metal/nodeLabels.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError, issuesOf } from '../../../schemas/platformError.ts';
import { nodeAggregate } from './node.ts';

export const setLabels = defineCommand({
  name: 'metal.setLabels',
  exposure: ['operator'],
  schema: SetLabels,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  decide(command, state): MetalEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `node ${command.nodeId} is not enrolled`);
    const reserved = [...Object.keys(command.set), ...command.remove].filter(isDerivedLabelKey);
    if (reserved.length > 0) {
      throw new DomainError('LABEL_RESERVED', `labels under bc.dev/ are derived by the control plane, not set by operators: ${reserved.join(', ')}`);
    }
    const before = state.labels ?? {};
    const after: Record<string, string> = { ...before, ...command.set };
    for (const key of command.remove) delete after[key];
    const valid = NodeLabels.safeParse(after);
    if (!valid.success) throw new DomainError('VALIDATION_FAILED', `node ${command.nodeId} would carry invalid labels`, { issues: issuesOf(valid.error) });
    if (sameLabels(before, after)) return [];
    return [{ type: 'NodeLabelsSet', data: { nodeId: command.nodeId, labels: sortedByKey(after) } }];
  },
});

const sameLabels = (a: NodeLabels, b: NodeLabels): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => Object.hasOwn(b, key) && b[key] === value);

/** Sorted keys: the same labels always serialise the same way in the log and the read model. */
const sortedByKey = (labels: NodeLabels): Record<string, string> => Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
