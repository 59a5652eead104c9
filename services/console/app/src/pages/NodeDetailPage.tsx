import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { HistoryTimeline } from '../nodes/HistoryTimeline.tsx';
import { NodeActions } from '../nodes/NodeActions.tsx';
import { NodeFacts } from '../nodes/NodeFacts.tsx';
import { NodeLogs } from '../nodes/NodeLogs.tsx';
import { NodePower } from '../nodes/NodePower.tsx';
import { WorkflowSteps } from '../workflows/WorkflowSteps.tsx';

/** One node: state and actions, its power, where it is and what it is (its agent's liveness too), the workflow running on it, its past workflows, its live log and history. */
export function NodeDetailPage({ nodeId }: { nodeId: string }) {
  const { client } = useSignedIn();
  const node = useResource(`node:${nodeId}`, (minSeq, signal) => client.node(nodeId, minSeq, signal));
  const workflows = useResource(`node-workflows:${nodeId}`, (minSeq, signal) => client.nodeWorkflows(nodeId, minSeq, signal));
  const n = node.data;
  useLiveReload(node, subjectOf.nodeView({ nodeId, workflowId: n?.workflowId ?? null }));
  // The node's workflow list (which never answers 404, unlike a workflow still queued) carries the current one's steps.
  useLiveReload(workflows, (b) => subjectOf.node(nodeId)(b) || (n?.workflowId ? subjectOf.workflow(n.workflowId)(b) : false));
  const current = n?.workflowId ? workflows.data?.items.find((w) => w.workflowId === n.workflowId) : undefined;

  if (node.error?.code === 'NOT_FOUND') {
    return (
      <section>
        <h1>Node {nodeId}</h1>
        <ProblemAlert error={node.error} />
        <p>
          <Link href="/nodes">All nodes</Link>
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="node-title">
      <h1 id="node-title">
        Node {nodeId} {n && <StateBadge state={n.state} />}
        {n?.maintenance && <span className="flag"> maintenance</span>}
      </h1>
      <ProblemAlert error={node.error} />
      {n && (
        <>
          {n.waitingReason && <p className="notice">Waiting: {n.waitingFor ?? n.waitingReason}</p>}
          {n.failure && (
            <p className="problem" role="note">
              {n.failure.operation ?? 'Operation'} failed{n.failure.failedStep ? ` at ${n.failure.failedStep}` : ''}: {n.failure.reason}
            </p>
          )}
          {n.maintenance && n.maintenanceReason && (
            <p className="notice">
              Maintenance ({n.maintenanceSource}): {n.maintenanceReason}
            </p>
          )}
          <NodeActions node={n} onDone={(seq) => node.reload(seq)} />
          <NodePower node={n} workflows={workflows.data?.items ?? []} onDone={(seq) => node.reload(seq)} />
          <div className="columns">
            <section aria-labelledby="node-facts">
              <h2 id="node-facts">Node</h2>
              <NodeFacts node={n} />
            </section>
            <section aria-labelledby="node-current">
              <h2 id="node-current">Current workflow</h2>
              {!n.workflowId && <p>None: the node is at rest.</p>}
              {n.workflowId && !current && <p>Workflow {n.workflowId} is queued: it has not started yet.</p>}
              {current && <WorkflowSteps workflow={current} />}
              <h2>Past workflows</h2>
              <ProblemAlert error={workflows.error} />
              <ul className="past-workflows">
                {workflows.data?.items
                  .filter((w) => w !== current)
                  .map((w) => (
                    <li key={w.workflowId}>
                      <Link href={`/workflows/${w.workflowId}`}>{w.operation}</Link> <StateBadge state={w.state} />{' '}
                      <time dateTime={w.startedAt}>{new Date(w.startedAt).toLocaleString()}</time>
                    </li>
                  ))}
              </ul>
            </section>
          </div>
          <NodeLogs nodeId={nodeId} />
          <HistoryTimeline nodeId={nodeId} latestSeq={n.lastSeq} />
        </>
      )}
    </section>
  );
}
