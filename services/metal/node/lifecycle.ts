import { createHash } from 'node:crypto';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import type { NodeState } from '../../../schemas/metal/nodeState.ts';
import type { NodeOperation } from '../../../schemas/metal/workflow.ts';
import { DomainError } from '../../platform/errors.ts';
import type { NodeAggregateState } from './node.ts';

export type ExistingNode = Extract<NodeAggregateState, { exists: true }>;

/** A workflow id fixed by the requesting command, so a retried request names the same workflow. */
export const workflowIdFor = (nodeId: string, commandId: string) =>
  `wf-${createHash('sha256').update(`${nodeId}:${commandId}`).digest('hex').slice(0, 12)}`;

export function requireNode(state: NodeAggregateState, nodeId: string): ExistingNode {
  if (!state.exists) throw new DomainError('NOT_FOUND', `node ${nodeId} is not enrolled`);
  return state;
}

/** Refuses a command unless the node is in one of `from` (and, for new work, out of maintenance). */
export function requireState(node: ExistingNode, command: string, from: readonly NodeState[], options: { inService?: boolean } = {}): void {
  if (!from.includes(node.state)) {
    throw new DomainError('ILLEGAL_TRANSITION', `${command} is not allowed in state ${node.state} (allowed: ${from.join(', ')})`);
  }
  if (options.inService && node.maintenance) throw new DomainError('ILLEGAL_TRANSITION', `${command} is not allowed while node ${node.nodeId} is in maintenance`);
}

/** The event that starts an operation: the node enters its working state and the workflow id is fixed. */
export function requestOperation(node: ExistingNode, operation: NodeOperation, inputs: Record<string, unknown>, commandId: string): MetalEvent[] {
  return [
    {
      type: 'NodeOperationRequested',
      data: { nodeId: node.nodeId, siteId: node.siteId, operation, workflowId: workflowIdFor(node.nodeId, commandId), inputs },
    },
  ];
}

/** For internal commands about one workflow: the node must be running exactly that workflow. */
export function requireCurrentWorkflow(node: ExistingNode, workflowId: string): NonNullable<ExistingNode['current']> {
  if (!node.current || node.current.workflowId !== workflowId) {
    throw new DomainError('ILLEGAL_TRANSITION', `node ${node.nodeId} is not running workflow ${workflowId}`);
  }
  return node.current;
}
