const nodePrefix = 'bc.evt.metal.node.';
const workflowPrefix = 'bc.evt.metal.workflow.';

/**
 * The nodes whose view a batch may change: the node of a node subject, and the node running the workflow of a workflow
 * subject (its `WorkflowStarted` clears the node's waiting-for-capacity, which the nodes read model folds from the
 * workflow's subject, not the node's).
 */
export function nodesChangedBy(batch: { readonly subject: string }, nodes: Iterable<{ nodeId: string; workflowId: string | null }>): string[] {
  if (batch.subject.startsWith(nodePrefix)) return [batch.subject.slice(nodePrefix.length)];
  if (!batch.subject.startsWith(workflowPrefix)) return [];
  const workflowId = batch.subject.slice(workflowPrefix.length);
  const changed: string[] = [];
  for (const node of nodes) if (node.workflowId === workflowId) changed.push(node.nodeId);
  return changed;
}
