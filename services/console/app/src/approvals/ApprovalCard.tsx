import { useState } from 'react';
import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { ApprovalView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { describeStep } from './approvalWords.ts';
import { signVerdict, type ApproverKey } from './approverKey.ts';

/** One batch: what it approves in words, who signed so far, and (for an approver with a key loaded) approve or reject. */
export function ApprovalCard({ approval, signer, onDecided }: { approval: ApprovalView; signer: ApproverKey | null; onDecided: (seq: number) => void }) {
  const { client } = useSignedIn();
  const workflow = useResource(`workflow:${approval.workflowId}`, (_minSeq, signal) => client.workflow(approval.workflowId, undefined, signal));
  const [verdict, setVerdict] = useState<'approve' | 'reject' | null>(null);
  const [reason, setReason] = useState('');
  const steps = approval.items.map((item) => ({ item, step: workflow.data?.steps.find((s) => s.stepIndex === item.stepIndex) }));
  const words = steps.map(({ item, step }) => `step ${item.stepIndex + 1}: ${step ? describeStep(step) : item.stepId}`);
  const title = `${approval.operation} on node ${approval.nodeId}`;

  const decide = async () => {
    const signature = await signVerdict(signer!, verdict!, approval.digest);
    const result =
      verdict === 'approve'
        ? await client.approve(approval.workflowId, { approverId: signer!.approverId, signature })
        : await client.reject(approval.workflowId, { approverId: signer!.approverId, signature, reason: reason.trim() });
    onDecided(result.seq);
  };

  return (
    <article className="approval" data-workflow={approval.workflowId} aria-label={`Approval: ${title}`}>
      <h2>
        {approval.operation} on <Link href={`/nodes/${encodeURIComponent(approval.nodeId)}`}>{approval.nodeId}</Link> <StateBadge state={approval.state} />
      </h2>
      <p>
        Approving lets workflow <Link href={`/workflows/${approval.workflowId}`}>{approval.workflowId}</Link> do this, and nothing else:
      </p>
      <ul>
        {words.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
      <p>
        Signed by {approval.grantedBy.length} of {approval.threshold} needed
        {approval.grantedBy.length > 0 ? ` (${approval.grantedBy.join(', ')})` : ''}; expires{' '}
        <time dateTime={approval.expiresAt}>{new Date(approval.expiresAt).toLocaleString()}</time>.
        {approval.rejectedBy && ` Rejected by ${approval.rejectedBy}: ${approval.rejectionReason}`}
      </p>
      <p className="digest">
        Digest <code>{approval.digest}</code>
      </p>
      {approval.state === 'pending' && signer && (
        <div className="actions" role="group" aria-label={`Decide on ${title}`}>
          <button type="button" className="primary" onClick={() => setVerdict('approve')} disabled={approval.grantedBy.includes(signer.approverId)}>
            Approve
          </button>
          <button type="button" className="danger" onClick={() => setVerdict('reject')}>
            Reject
          </button>
        </div>
      )}
      {verdict && (
        <ConfirmDialog
          title={`${verdict === 'approve' ? 'Approve' : 'Reject'}: ${title}`}
          confirmLabel={verdict === 'approve' ? 'Sign and approve' : 'Sign and reject'}
          danger={verdict === 'reject'}
          onClose={() => setVerdict(null)}
          onConfirm={decide}
        >
          <p>
            As approver {signer!.approverId} you sign{' '}
            <code>
              bc-approval/v1/{verdict}/{approval.digest.slice(0, 16)}…
            </code>{' '}
            in this page.
          </p>
          <ul>
            {words.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
          {verdict === 'reject' && (
            <div className="field">
              <label htmlFor={`reason-${approval.workflowId}`}>Reason</label>
              <input id={`reason-${approval.workflowId}`} required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
            </div>
          )}
        </ConfirmDialog>
      )}
    </article>
  );
}
