import type { Resource } from '../api/useResource.ts';
import { useLiveConnected, useLiveEvents, type LiveBatch } from './eventStream.tsx';
import { nodesChangedBy } from './nodeChanges.ts';

/**
 * Reloads `resource` (reading no older than the batch) whenever a live batch matches, and when the stream connects
 * (no older than where it starts): how pages stay current.
 */
export function useLiveReload(resource: Pick<Resource<unknown>, 'reload'>, matches: (batch: LiveBatch) => boolean): void {
  useLiveEvents((batch) => {
    if (matches(batch)) resource.reload(batch.seq);
  });
  useLiveConnected((seq) => resource.reload(seq));
}

/** Subjects of the log, by what a page watches. */
export const subjectOf = {
  anyNode: (b: LiveBatch) => b.subject.startsWith('bc.evt.metal.node.'),
  node: (nodeId: string) => (b: LiveBatch) => b.subject === `bc.evt.metal.node.${nodeId}`,
  /** A node's view, which its running workflow's events change too (waiting-for-capacity ends at `WorkflowStarted`). */
  nodeView: (node: { nodeId: string; workflowId: string | null }) => (b: LiveBatch) => nodesChangedBy(b, [node]).length > 0,
  /** Fleet counts: node events, and workflow starts that end a wait for capacity. */
  anyNodeOrWorkflow: (b: LiveBatch) => b.subject.startsWith('bc.evt.metal.node.') || b.subject.startsWith('bc.evt.metal.workflow.'),
  anyWorkflow: (b: LiveBatch) => b.subject.startsWith('bc.evt.metal.workflow.'),
  workflow: (workflowId: string) => (b: LiveBatch) => b.subject === `bc.evt.metal.workflow.${workflowId}`,
  vps: (b: LiveBatch) => b.subject.startsWith('bc.evt.vps.'),
  plugins: (b: LiveBatch) => b.subject.startsWith('bc.evt.plugins.'),
  autonomy: (b: LiveBatch) => b.subject.startsWith('bc.evt.autonomy.'),
  /** Modules, publishers, templates, assignments and rollouts. */
  fleet: (b: LiveBatch) => b.subject.startsWith('bc.evt.fleet.'),
  /** One kind of them: `module`, `publishers`, `template`, `assignment` or `rollout`. */
  fleetOf: (aggregate: 'module' | 'publishers' | 'template' | 'assignment' | 'rollout') => (b: LiveBatch) => b.subject.startsWith(`bc.evt.fleet.${aggregate}.`),
  /** A module's rollouts: the rollout aggregate is the module's (`bc.evt.fleet.rollout.<module>`). */
  rolloutsOf: (module: string) => (b: LiveBatch) => b.subject === `bc.evt.fleet.rollout.${module}`,
};
