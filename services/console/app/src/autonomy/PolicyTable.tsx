import type { PolicyView } from '../api/shapes.ts';
import { TableHead } from '../components/TableHead.tsx';

const duration = (ms: number) => (ms >= 3_600_000 ? `${ms / 3_600_000} h` : ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

/** The declared categories: owner, the disposition in force (and whether an operator overrode it or paused the owner). */
export function PolicyTable({ policies }: { policies: readonly PolicyView[] }) {
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption="Autonomy policies" columns={['Category', 'Owner', 'Disposition', 'Kind', 'Approval timeout', 'What it does']} />
        <tbody>
          {policies.map((p) => (
            <tr key={p.category} data-category={p.category}>
              <td>{p.category}</td>
              <td>
                {p.owner}
                {p.paused ? ' (paused)' : ''}
              </td>
              <td>
                {p.effectiveDisposition}
                {p.overridden ? ` (declared ${p.disposition})` : ''}
              </td>
              <td>
                {p.kind}
                {p.advancement ? ', advancement' : ''}
              </td>
              <td>{duration(p.approvalTimeoutMs)}</td>
              <td>{p.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
