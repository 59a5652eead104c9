import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { RolloutDetailView } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { RolloutActions } from '../modules/RolloutActions.tsx';
import { RolloutVerdicts } from '../modules/RolloutVerdicts.tsx';
import { RolloutWaves } from '../modules/RolloutWaves.tsx';

const duration = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`);

/** What the rollout's status means for the operator, with the last halt's reason and failed hosts. */
function statusLine(r: RolloutDetailView): string {
  switch (r.status) {
    case 'awaiting-approval':
      return `Awaiting approval: ${r.approvals.length} of ${r.approvalsRequired} approvers signed its plan digest (${r.approvals.join(', ') || 'none yet'}); no wave starts before${r.approvalExpiresAt ? `, and the request expires at ${r.approvalExpiresAt}` : ''}.`;
    case 'rejected':
      return `Rejected by ${r.rejectedBy ?? 'an approver'}: no host was touched.`;
    case 'approval-expired':
      return `The approval request expired at ${r.approvalExpiresAt ?? '?'} with ${r.approvals.length} of ${r.approvalsRequired} approvals: no host was touched.`;
    case 'running':
      return 'Waves start as the one before reports healthy.';
    case 'paused':
      return 'Paused: no wave starts until it is resumed.';
    case 'halted':
      return `Halted (${r.halt?.reason ?? 'unknown'}; failed: ${r.halt?.failed.join(', ') || 'none'}): continue, roll back or abort.`;
    case 'rolling-back':
      return `Rolling back ${r.rollbackTargets?.join(', ') ?? ''} to ${r.fromVersion}.`;
    default:
      return `Ended: ${r.status}.`;
  }
}

/** One rollout: its status and options, the verbs the token may send, and its waves with each host's outcome, live. */
export function RolloutPage({ rolloutId }: { rolloutId: string }) {
  const { client } = useSignedIn();
  const rollout = useResource(`rollout:${rolloutId}`, (minSeq, signal) => client.rollout(rolloutId, minSeq, signal));
  const r = rollout.data;
  // The rollout's events are on its module's subject; until the first read names the module, any fleet event reloads.
  useLiveReload(rollout, r ? subjectOf.rolloutsOf(r.module) : subjectOf.fleet);
  return (
    <section aria-labelledby="rollout-title">
      <h1 id="rollout-title">
        Rollout {rolloutId} {r && <StateBadge state={r.status} />}
      </h1>
      <ProblemAlert error={rollout.error} />
      {r && (
        <>
          <p>
            <Link href={`/modules/${encodeURIComponent(r.module)}`}>{r.module}</Link> {r.fromVersion} → {r.toVersion}
            {r.template ? ` on hosts of template ${r.template}` : ''}: {r.hostCount} hosts in {r.waveCount} waves, {r.startedWaves} started.
          </p>
          <p className={r.status === 'halted' ? 'problem' : 'notice'} role="note" data-status={r.status}>
            {statusLine(r)}
          </p>
          <RolloutActions rollout={r} onDone={(seq) => rollout.reload(seq)} />
          <RolloutVerdicts rollout={r} onDone={(seq) => rollout.reload(seq)} />
          <dl>
            <dt>Canary</dt>
            <dd>{r.options.canarySize === 1 ? '1 host' : `${r.options.canarySize} hosts`}</dd>
            <dt>Later waves</dt>
            <dd>{r.options.wavePercent}% of the hosts after the canary</dd>
            <dt>Halts after</dt>
            <dd>{r.options.maxConsecutiveFailures} failures in a row</dd>
            <dt>Wave timeout</dt>
            <dd>{duration(r.options.waveTimeoutMs)}</dd>
            <dt>Plan digest</dt>
            <dd>
              <code>{r.planDigest}</code>
            </dd>
            <dt>Started</dt>
            <dd>
              <time dateTime={r.startedAt}>{new Date(r.startedAt).toLocaleString()}</time> by {r.startedBy}
            </dd>
          </dl>
          <h2>Waves</h2>
          <RolloutWaves rollout={r} />
        </>
      )}
    </section>
  );
}
