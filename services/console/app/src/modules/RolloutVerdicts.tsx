import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { RolloutView } from '../api/shapes.ts';
import { ApproverKeyForm } from '../approvals/ApproverKeyForm.tsx';
import { signRolloutVerdict, type ApproverKey } from '../approvals/approverKey.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';

/**
 * An approver's answer to a rollout awaiting approval: with the approver's key loaded into this page (`ApproverKeyForm`,
 * as for a workflow's batch), approve or reject, each behind a confirmation naming the plan digest signed. The
 * signature is made here over `rolloutApprovalText` (the rollout id and its plan digest): the key never leaves the page.
 * Shown to approver tokens only, and only while the rollout awaits approval (the API refuses anyone else).
 */
export function RolloutVerdicts({ rollout, onDone }: { rollout: RolloutView; onDone: (seq: number) => void }) {
  const { client, session } = useSignedIn();
  const [signer, setSigner] = useState<ApproverKey | null>(null);
  const [verdict, setVerdict] = useState<'approve' | 'reject' | null>(null);
  if (session.role !== 'approver' || rollout.status !== 'awaiting-approval') return null;
  const { rolloutId, planDigest } = rollout;

  const send = async () => {
    if (!signer || !verdict) return;
    const signature = await signRolloutVerdict(signer, verdict, { rolloutId, planDigest });
    onDone((await client.rolloutVerdict(rolloutId, verdict, { planDigest, approverId: signer.approverId, signature })).seq);
  };

  return (
    <section aria-label="Approve or reject this rollout">
      <ApproverKeyForm current={signer} onKey={setSigner} />
      {signer && (
        <div className="actions" role="group" aria-label="Rollout approval">
          <button type="button" className="primary" onClick={() => setVerdict('approve')}>
            Approve
          </button>
          <button type="button" className="danger" onClick={() => setVerdict('reject')}>
            Reject
          </button>
        </div>
      )}
      {signer && verdict && (
        <ConfirmDialog
          title={`${verdict === 'approve' ? 'Approve' : 'Reject'}: rollout ${rolloutId}`}
          confirmLabel={verdict === 'approve' ? 'Sign and approve' : 'Sign and reject'}
          danger={verdict === 'reject'}
          onClose={() => setVerdict(null)}
          onConfirm={send}
        >
          <p>
            {verdict === 'approve'
              ? `Approving counts toward the ${rollout.approvalsRequired} approvals that let ${rollout.module} ${rollout.fromVersion} → ${rollout.toVersion} start its canary.`
              : `Rejecting ends the rollout of ${rollout.module} ${rollout.fromVersion} → ${rollout.toVersion}: no host is touched, whatever the others signed.`}
          </p>
          <p>
            As approver {signer.approverId} you sign, in this page, rollout {rolloutId} and its plan digest
            {rollout.approvalExpiresAt ? ` (the request expires at ${rollout.approvalExpiresAt})` : ''}.
          </p>
          <p className="digest">
            Plan digest <code>{planDigest}</code>
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
