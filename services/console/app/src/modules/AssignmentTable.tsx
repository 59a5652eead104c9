import { Link } from 'wouter';
import type { AssignmentView } from '../api/shapes.ts';
import { TableHead } from '../components/TableHead.tsx';

const entries = (plan: AssignmentView['plan']) => Object.entries(plan).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Hosts and the plan each is pinned to: its template, its pins, and every module's version. With `module`, one column
 * says which version of that module the host runs.
 */
export function AssignmentTable({ assignments, module }: { assignments: readonly AssignmentView[]; module?: string }) {
  const columns = ['Host', ...(module ? [`${module} version`] : []), 'Template', 'Pins', 'Plan', 'Assigned'];
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption={module ? `Hosts whose plan has ${module}` : 'Hosts and their plans'} columns={columns} />
        <tbody>
          {assignments.map((a) => (
            <tr key={a.nodeId} data-assignment={a.nodeId}>
              <td>
                <Link href={`/nodes/${encodeURIComponent(a.nodeId)}`}>{a.nodeId}</Link>
              </td>
              {module && <td>{a.plan[module] ?? '—'}</td>}
              <td>{a.template ?? '—'}</td>
              <td>{a.pins.map((p) => `${p.module}@${p.version}`).join(', ') || '—'}</td>
              <td>
                {entries(a.plan)
                  .map(([name, version]) => `${name}@${version}`)
                  .join(', ') || '—'}
              </td>
              <td>
                <time dateTime={a.assignedAt}>{new Date(a.assignedAt).toLocaleString()}</time> by {a.assignedBy}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
