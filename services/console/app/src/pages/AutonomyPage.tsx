import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { DecisionView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ApproverKeyForm } from '../approvals/ApproverKeyForm.tsx';
import type { ApproverKey } from '../approvals/approverKey.ts';
import { DecisionTable, decides } from '../autonomy/DecisionTable.tsx';
import { PolicyTable } from '../autonomy/PolicyTable.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { ChoiceFilter } from '../components/ChoiceFilter.tsx';

const statuses: readonly (DecisionView['status'] | '')[] = ['pending', 'approved', 'running', 'notified', 'blocked', 'closed', ''];

/** A budget's sliding window for people: `1 h`, `30 min`, `2 d`. */
const windowLabel = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000} d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;

/**
 * What the autonomy engine decided about fleet signals, the consent budgets it spends, and the declared policies. Staff
 * read all of it; approver tokens (and admin tokens while no quorum is set) answer pending approval requests here.
 */
export function AutonomyPage() {
  const { client, session } = useSignedIn();
  const [status, setStatus] = useState<DecisionView['status'] | ''>('');
  const [signer, setSigner] = useState<ApproverKey | null>(null);
  const decisions = useResource(`decisions:${status}`, (minSeq, signal) => client.decisions(status || undefined, minSeq, signal));
  const budgets = useResource('budgets', (minSeq, signal) => client.budgets(minSeq, signal));
  const controls = useResource('autonomy-controls', (minSeq, signal) => client.autonomyControls(minSeq, signal));
  const policies = useResource('autonomy-policies', (minSeq, signal) => client.autonomyPolicies(minSeq, signal));
  useLiveReload(decisions, subjectOf.autonomy);
  useLiveReload(budgets, subjectOf.autonomy);
  useLiveReload(controls, subjectOf.autonomy);
  useLiveReload(policies, subjectOf.autonomy);
  const reloadAll = (seq: number) => {
    decisions.reload(seq);
    budgets.reload(seq);
  };

  return (
    <section aria-labelledby="autonomy-title">
      <h1 id="autonomy-title">Autonomy</h1>
      <ProblemAlert error={controls.error} />
      {controls.data?.halted && (
        <p role="status">
          <strong>Autonomy is halted</strong>
          {controls.data.haltReason ? `: ${controls.data.haltReason}` : ''}. Nothing is remediated until it is resumed.
        </p>
      )}
      {decides(session.role) ? (
        <>
          <p>With an approver quorum set, only approvals signed with an approver's key count: load yours to sign here.</p>
          <ApproverKeyForm current={signer} onKey={setSigner} />
        </>
      ) : (
        <p>Only an approver or admin token can approve or reject a pending request.</p>
      )}

      <h2>Decisions</h2>
      <ChoiceFilter<DecisionView['status']>
        formLabel="Filter decisions"
        id="decision-status"
        label="Status"
        value={status}
        choices={statuses}
        onChange={setStatus}
      />
      <ProblemAlert error={decisions.error} />
      {decisions.data?.items.length === 0 && <p>No {status} decisions.</p>}
      {decisions.data && decisions.data.items.length > 0 && (
        <DecisionTable decisions={decisions.data.items} role={session.role} signer={signer} onDecided={reloadAll} />
      )}

      <h2>Budgets</h2>
      <ProblemAlert error={budgets.error} />
      {budgets.data?.items.length === 0 && <p>No budget spent yet.</p>}
      {budgets.data && budgets.data.items.length > 0 && (
        <div className="table-scroll">
          <table>
            <TableHead caption="Consent budgets" columns={['Scope', 'In any', 'Used', 'Limit', 'Next free']} />
            <tbody>
              {budgets.data.items.map((b) => (
                <tr key={b.budgetId} data-budget={b.budgetId}>
                  <td>{b.scope}</td>
                  <td>{windowLabel(b.windowMs)}</td>
                  <td>{b.consumed}</td>
                  <td>{b.limit}</td>
                  <td>{b.nextFreeAt ? <time dateTime={b.nextFreeAt}>{new Date(b.nextFreeAt).toLocaleString()}</time> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Policies</h2>
      <ProblemAlert error={policies.error} />
      {policies.data && <PolicyTable policies={policies.data.items} />}
    </section>
  );
}
