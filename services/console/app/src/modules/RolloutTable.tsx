import { Link } from 'wouter';
import type { RolloutView } from '../api/shapes.ts';
import { StateBadge } from '../components/StateBadge.tsx';
import { TableHead } from '../components/TableHead.tsx';

/** Rollouts, newest first: module and versions, status (with the last halt's reason), waves started, hosts, start. */
export function RolloutTable({ rollouts, caption }: { rollouts: readonly RolloutView[]; caption: string }) {
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption={caption} columns={['Rollout', 'Module', 'Versions', 'Status', 'Waves started', 'Hosts', 'Started']} />
        <tbody>
          {rollouts.map((r) => (
            <tr key={r.rolloutId} data-rollout={r.rolloutId}>
              <td>
                <Link href={`/rollouts/${encodeURIComponent(r.rolloutId)}`}>{r.rolloutId}</Link>
              </td>
              <td>
                <Link href={`/modules/${encodeURIComponent(r.module)}`}>{r.module}</Link>
              </td>
              <td>
                {r.fromVersion} → {r.toVersion}
              </td>
              <td>
                <StateBadge state={r.status} />
                {r.halt && r.status === 'halted' && <strong className="problem-inline"> {r.halt.reason}</strong>}
              </td>
              <td>
                {r.startedWaves}/{r.waveCount}
              </td>
              <td>{r.hostCount}</td>
              <td>
                <time dateTime={r.startedAt}>{new Date(r.startedAt).toLocaleString()}</time> by {r.startedBy}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
