import { createHash } from 'node:crypto';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { isRefusedInMaintenance } from '../../../schemas/metal/maintenanceRule.ts';
import type { NodeState } from '../../../schemas/metal/nodeState.ts';
import type { NodeOperation } from '../../../schemas/metal/workflow.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import type { NodeAggregateState } from './node.ts';

export type ExistingNode = Extract<NodeAggregateState, { exists: true }>;

/** A workflow id fixed by the requesting command, so a retried request names the same workflow. */
export const workflowIdFor = (nodeId: string, commandId: string) => `wf-${createHash('sha256').update(`${nodeId}:${commandId}`).digest('hex').slice(0, 12)}`;

export function requireNode(state: NodeAggregateState, nodeId: string): ExistingNode {
  if (!state.exists) throw new DomainError('NOT_FOUND', `node ${nodeId} is not enrolled`);
  return state;
}

/** Refuses a command unless the node is in one of `from` and the maintenance rule (`schemas/metal/maintenanceRule.ts`) lets it. */
export function requireState(node: ExistingNode, command: string, from: readonly NodeState[]): void {
  if (!from.includes(node.state)) {
    throw new DomainError('ILLEGAL_TRANSITION', `${command} is not allowed in state ${node.state} (allowed: ${from.join(', ')})`);
  }
  if (isRefusedInMaintenance(command, node.maintenance))
    throw new DomainError('ILLEGAL_TRANSITION', `${command} is not allowed while node ${node.nodeId} is in maintenance: clear maintenance first`);
}

/**
 * A tenant acts only on nodes that are its own or (for new work on a ready node) nobody's. Another tenant's node is
 * NOT_FOUND, worded as for a node that does not exist, so a tenant cannot tell the two apart.
 */
export function requireTenantAccess(node: ExistingNode, tenantId: string | undefined, options: { claimUnowned: boolean }): void {
  if (tenantId === undefined) return;
  const owner = node.owner ?? null;
  if (owner === tenantId) return;
  if (owner === null && options.claimUnowned && node.state === 'ready') return;
  throw new DomainError('NOT_FOUND', `node ${node.nodeId} is not enrolled`);
}

/**
 * The event that starts an operation: the node enters its working state and the workflow id is fixed. The owner
 * carries over (a retry or an operator's rescue keeps the node the tenant's) unless a tenant claims the node.
 */
export function requestOperation(
  node: ExistingNode,
  operation: NodeOperation,
  inputs: Record<string, unknown>,
  commandId: string,
  tenantId: string | undefined = undefined,
): MetalEvent[] {
  const owner = tenantId ?? node.owner ?? undefined;
  return [
    {
      type: 'NodeOperationRequested',
      data: {
        nodeId: node.nodeId,
        siteId: node.siteId,
        operation,
        workflowId: workflowIdFor(node.nodeId, commandId),
        inputs,
        ...(owner ? { tenantId: owner } : {}),
      },
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
