import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { ApprovalView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ApprovalCard } from '../approvals/ApprovalCard.tsx';
import { ApproverKeyForm } from '../approvals/ApproverKeyForm.tsx';
import type { ApproverKey } from '../approvals/approverKey.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { ChoiceFilter } from '../components/ChoiceFilter.tsx';

const states: readonly (ApprovalView['state'] | '')[] = ['pending', 'approved', 'rejected', 'expired', ''];

/**
 * Quorum batches of destructive workflows. Anyone may read them; an approver loads their key into the page and signs
 * approvals and rejections here, in the browser.
 */
export function ApprovalsPage() {
  const { client, session } = useSignedIn();
  const [state, setState] = useState<ApprovalView['state'] | ''>('pending');
  const [signer, setSigner] = useState<ApproverKey | null>(null);
  const approvals = useResource(`approvals:${state}`, (minSeq, signal) => client.approvals(state || undefined, minSeq, signal));
  useLiveReload(approvals, subjectOf.anyWorkflow);
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      {session.role === 'approver' ? (
        <ApproverKeyForm current={signer} onKey={setSigner} />
      ) : (
        <p>Only an approver token, with the approver's own key, can approve or reject.</p>
      )}
      <ChoiceFilter<ApprovalView['state']>
        formLabel="Filter approvals"
        id="approval-state"
        label="Batches"
        value={state}
        choices={states}
        onChange={setState}
      />
      <ProblemAlert error={approvals.error} />
      {approvals.data?.items.length === 0 && <p>No {state} batches.</p>}
      {approvals.data?.items.map((a) => (
        <ApprovalCard key={a.workflowId} approval={a} signer={signer} onDecided={(seq) => approvals.reload(seq)} />
      ))}
    </section>
  );
}
