import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeCounts, NodeState } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { nodeStates } from '../../../../../schemas/metal/nodeState.ts';

const headline: readonly { label: string; count: (c: NodeCounts) => number; state?: NodeState }[] = [
  { label: 'Nodes', count: (c) => c.total },
  { label: 'Ready', count: (c) => c.byState.ready, state: 'ready' },
  { label: 'Deployed', count: (c) => c.byState.deployed, state: 'deployed' },
  {
    label: 'In progress',
    count: (c) => c.byState.inspecting + c.byState.deploying + c.byState.releasing + c.byState.wiping + c.byState.rescuing + c.byState.remediating,
  },
  { label: 'Maintenance', count: (c) => c.maintenance },
  { label: 'Waiting for capacity', count: (c) => c.waitingForCapacity },
  { label: 'Failed', count: (c) => c.failed, state: 'failed' },
];

/** The fleet at a glance: counts by state per site, maintenance, capacity waits and failures, live from the log. */
export function FleetOverviewPage() {
  const { client } = useSignedIn();
  const summary = useResource('fleet', (minSeq, signal) => client.fleetSummary(minSeq, signal));
  const failures = useResource('failures', (minSeq, signal) => client.nodes({ state: 'failed', limit: 20, minSeq }, signal));
  useLiveReload(summary, subjectOf.anyNodeOrWorkflow);
  useLiveReload(failures, subjectOf.anyNode);
  const fleet = summary.data?.fleet;
  // Only states some node is in get a column: a fleet of 10 sites stays readable.
  const states = nodeStates.filter((s) => (fleet?.byState[s] ?? 0) > 0);

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Fleet overview</h1>
      <ProblemAlert error={summary.error} />
      {fleet && (
        <ul className="tiles" aria-label="Fleet totals">
          {headline.map((h) => (
            <li key={h.label} className={`tile${h.state ? ` tile-${h.state}` : ''}`}>
              <span className="tile-count" data-testid={`total-${h.label}`}>
                {h.count(fleet)}
              </span>
              <span className="tile-label">{h.label}</span>
            </li>
          ))}
        </ul>
      )}
      <h2>By site</h2>
      {summary.data && summary.data.sites.length === 0 && <p>No nodes yet.</p>}
      {summary.data && summary.data.sites.length > 0 && (
        <div className="table-scroll">
          <table className="counts">
            <caption className="visually-hidden">Nodes by site and state</caption>
            <thead>
              <tr>
                <th scope="col">Site</th>
                <th scope="col">Nodes</th>
                {states.map((s) => (
                  <th scope="col" key={s}>
                    <StateBadge state={s} />
                  </th>
                ))}
                <th scope="col">Maintenance</th>
                <th scope="col">Waiting for capacity</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {summary.data.sites.map((site) => (
                <tr key={site.siteId} data-site={site.siteId}>
                  <th scope="row">
                    <Link href={`/nodes?siteId=${encodeURIComponent(site.siteId)}`}>{site.siteId}</Link>
                  </th>
                  <td>{site.total}</td>
                  {states.map((s) => (
                    <td key={s} data-state={s}>
                      {site.byState[s]}
                    </td>
                  ))}
                  <td>{site.maintenance}</td>
                  <td>{site.waitingForCapacity}</td>
                  <td>{site.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Failures</h2>
      <ProblemAlert error={failures.error} />
      {failures.data && failures.data.items.length === 0 && <p>No failed nodes.</p>}
      {failures.data && failures.data.items.length > 0 && (
        <ul className="failures">
          {failures.data.items.map((n) => (
            <li key={n.nodeId}>
              <Link href={`/nodes/${encodeURIComponent(n.nodeId)}`}>{n.nodeId}</Link> ({n.siteId}): {n.failure?.operation ?? 'operation'} failed
              {n.failure?.failedStep ? ` at ${n.failure.failedStep}` : ''}: {n.failure?.reason}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
