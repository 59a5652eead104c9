import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { DecisionView } from '../api/shapes.ts';
import { signDecisionApproval, type ApproverKey } from '../approvals/approverKey.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';

/**
 * Approve or reject one pending decision, each behind a confirmation naming the plan. Rendered only for approver and
 * admin tokens (the API refuses anyone else, and admins while a quorum is set). A rejection needs a reason: it is
 * recorded and starts the key's cooldown. With an approver key loaded, the approval carries a signature over this
 * episode of the decision, its expiry and its plan digest (what counts under a quorum).
 */
export function DecisionActions({ decision, signer, onDecided }: { decision: DecisionView; signer: ApproverKey | null; onDecided: (seq: number) => void }) {
  const { client } = useSignedIn();
  const [verdict, setVerdict] = useState<'approve' | 'reject' | null>(null);
  const [reason, setReason] = useState('');
  const title = `${decision.category} on ${decision.key}`;

  const decide = async () => {
    const signature = signer && { approverId: signer.approverId, signature: await signDecisionApproval(signer, decision) };
    const result =
      verdict === 'approve'
        ? await client.approveDecision(decision.decisionId, signature ? { signature } : {})
        : await client.rejectDecision(decision.decisionId, { reason: reason.trim() });
    onDecided(result.seq);
  };

  return (
    <>
      <div className="actions" role="group" aria-label={`Decide on ${title}`}>
        <button type="button" className="primary" onClick={() => setVerdict('approve')}>
          Approve
        </button>
        <button type="button" className="danger" onClick={() => setVerdict('reject')}>
          Reject
        </button>
      </div>
      {verdict && (
        <ConfirmDialog
          title={`${verdict === 'approve' ? 'Approve' : 'Reject'}: ${title}`}
          confirmLabel={verdict === 'approve' ? 'Approve the plan' : 'Reject the request'}
          danger={verdict === 'reject'}
          onClose={() => setVerdict(null)}
          onConfirm={decide}
        >
          <p>
            {verdict === 'approve'
              ? `Approving lets the autonomy engine run ${decision.plan.action} on ${decision.plan.target.type} ${decision.plan.target.id}, and nothing else.`
              : `Rejecting closes the request; ${decision.key} cools down before it is asked about again.`}
          </p>
          {verdict === 'approve' && signer && (
            <p>
              As approver {signer.approverId} you sign, in this page, episode {decision.episode} of this request, expiring {decision.expiresAt}, and its plan
              digest.
            </p>
          )}
          <p className="digest">
            Plan digest <code>{decision.planDigest}</code>
          </p>
          {verdict === 'reject' && (
            <div className="field">
              <label htmlFor={`reason-${decision.decisionId}`}>Reason</label>
              <input id={`reason-${decision.decisionId}`} required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
            </div>
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
