import { CompleteOperation, RemediationInputs } from '../../../schemas/metal/nodeCommands.ts';
import { remediableStates, type RemediableState } from '../../../schemas/metal/nodeState.ts';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { erasingOperations } from '../../../schemas/metal/workflow.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { wipeAttestationOf, workflowRef } from '../../../schemas/metal/workflowState.ts';
import { requireCurrentWorkflow, requireNode } from './lifecycle.ts';
import { nodeAggregate } from './node.ts';

/** A remediation returns the node to where it started (its inputs say where); other operations end where their kind does. */
function returnOf(current: { operation: string; inputs: Readonly<Record<string, unknown>> }): { state?: RemediableState } {
  if (current.operation !== 'remediate') return {};
  const to = current.inputs[RemediationInputs.returnTo];
  return (remediableStates as readonly unknown[]).includes(to) ? { state: to as RemediableState } : {};
}

/** Commands the orchestrator sends as a node's workflow progresses; each is a no-op once its effect is in place. */
export const completeOperation = defineCommand({
  name: 'metal.completeOperation',
  exposure: ['engine'],
  schema: CompleteOperation,
  aggregate: nodeAggregate,
  aggregateId: (command) => command.nodeId,
  dependencies: async (command, load) => {
    // The pool's release policy is read when the release ends, so the decision follows the pool, not a copy of it.
    const node = await load(nodeAggregate, command.nodeId);
    const poolId = node.exists ? node.poolId : undefined;
    const pool = poolId === undefined ? undefined : await load(poolRef, poolId);
    // Only the end of an erasing operation looks at its workflow (for the wipe's attestation). The node read here may be
    // behind; the decision then refuses, and the bus decides again on fresh reads.
    const erasing = node.exists && node.current?.workflowId === command.workflowId && erasingOperations.has(node.current.operation);
    return {
      // Read from the log: the executor records the workflow's steps in its own process, this one may be behind.
      workflow: erasing ? await load(workflowRef, command.workflowId, { fresh: true }) : undefined,
      unverifiedReleaseAllowed: pool?.exists === true && pool.policy.allowUnverifiedRelease,
    };
  },
  decide(command, state, { dependencies }): MetalEvent[] {
    const node = requireNode(state, command.nodeId);
    if (node.current?.workflowId !== command.workflowId && (node.failed?.workflowId === command.workflowId || !node.current)) return [];
    const current = requireCurrentWorkflow(node, command.workflowId);
    const { nodeId } = node;
    const { operation } = current;
    const completed: MetalEvent = { type: 'NodeOperationCompleted', data: { nodeId, operation, workflowId: command.workflowId, ...returnOf(current) } };
    if (!erasingOperations.has(operation)) return [completed];
    if (!dependencies.workflow) throw new DomainError('PRECONDITION_FAILED', `the workflow of ${operation} ${command.workflowId} was not read`);
    const wipe = wipeAttestationOf(dependencies.workflow);
    if (wipe.attested) return [completed];
    // An agentless pool that opted in takes its node back (or retires it) unwiped, and the log says so.
    if (dependencies.unverifiedReleaseAllowed && node.poolId !== undefined) {
      return [{ type: 'NodeReleaseUnverified', data: { nodeId, workflowId: command.workflowId, poolId: node.poolId } }, completed];
    }
    // The machine may still hold the last tenant's data: only a verified wipe puts it back in the pool or retires it.
    const reason = `${operation} finished without an attested disk wipe: ${wipe.reason}`.slice(0, 1000);
    return [{ type: 'NodeOperationFailed', data: { nodeId, operation, workflowId: command.workflowId, reason, failedStep: 'disk.wipe', maintenance: true } }];
  },
});
