import type { DecisionView, Role } from '../api/shapes.ts';
import type { ApproverKey } from '../approvals/approverKey.ts';
import { StateBadge } from '../components/StateBadge.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { DecisionActions } from './DecisionActions.tsx';

/** Who may answer an approval request: the API lets approver and admin tokens alone approve or reject. */
export const decides = (role: Role): boolean => role === 'approver' || role === 'admin';

/** What the last pass after the settle window said: did the remediation clear the signal? */
function outcomeOf(d: DecisionView): string {
  if (d.closedReason) return `closed: ${d.closedReason}`;
  if (!d.lastOutcome) return d.remediation ? `started ${d.remediation.commandName}` : '—';
  if (!d.lastOutcome.sensorOk) return 'sensor failed; not judged';
  const verdict = d.lastOutcome.effective ? 'effective' : `not effective (${d.ineffectiveStreak} in a row)`;
  return d.escalated ? `${verdict}; escalated to the owner` : verdict;
}

const when = (iso: string | null) => (iso ? <time dateTime={iso}>{new Date(iso).toLocaleString()}</time> : '—');

/** Decisions with their category, natural key, disposition, status, the expiry of a pending request, and outcome. */
export function DecisionTable({
  decisions,
  role,
  signer,
  onDecided,
}: {
  decisions: readonly DecisionView[];
  role: Role;
  signer: ApproverKey | null;
  onDecided: (seq: number) => void;
}) {
  const canDecide = decides(role);
  const columns = ['Category', 'Key', 'Disposition', 'Status', 'Expires', 'Outcome', ...(canDecide ? ['Action'] : [])];
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption="Autonomy decisions" columns={columns} />
        <tbody>
          {decisions.map((d) => (
            <tr key={d.decisionId} data-decision={d.decisionId}>
              <td>{d.category}</td>
              <td>
                <code>{d.key}</code>
              </td>
              <td>
                {d.disposition}
                {d.dispositionReason ? ` (${d.dispositionReason})` : ''}
              </td>
              <td>
                <StateBadge state={d.status} />
                {d.approvedBy ? ` by ${d.approvedBy}` : ''}
              </td>
              <td>{d.status === 'pending' ? when(d.expiresAt) : '—'}</td>
              <td>{outcomeOf(d)}</td>
              {canDecide && <td>{d.status === 'pending' ? <DecisionActions decision={d} signer={signer} onDecided={onDecided} /> : '—'}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
