import type { WorkflowView } from '../api/shapes.ts';
import { StateBadge } from '../components/StateBadge.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { StepTimeline } from './StepTimeline.tsx';
import { workflowOutcome } from './workflowOutcome.ts';

/** What a step's output says about a wipe: only a wipe result signed by the machine's ramdisk key is attested. */
const attestation = (output: unknown): string | null => {
  if (!output || typeof output !== 'object' || !('attested' in output)) return null;
  return output.attested === true ? 'attested' : 'not attested';
};

/** A workflow's steps in order: their timeline with outputs, then state, attempts, destructive flag and attestation, and the failure code if any. */
export function WorkflowSteps({ workflow }: { workflow: WorkflowView }) {
  const done = workflow.steps.filter((s) => s.state === 'succeeded').length;
  const outcome = workflowOutcome(workflow);
  return (
    <div className="workflow" data-workflow={workflow.workflowId}>
      <p>
        <StateBadge state={workflow.state} /> {workflow.operation} with profile {workflow.profile.id} v{workflow.profile.version} on {workflow.nodeId}, started{' '}
        <time dateTime={workflow.startedAt}>{new Date(workflow.startedAt).toLocaleString()}</time>
        {workflow.endedAt && (
          <>
            , ended <time dateTime={workflow.endedAt}>{new Date(workflow.endedAt).toLocaleString()}</time>
          </>
        )}
      </p>
      <progress max={workflow.steps.length} value={done} aria-label={`Steps done: ${done} of ${workflow.steps.length}`} />
      {outcome && (
        <p className={outcome.kind === 'failed' ? 'problem' : 'notice'} role="note" data-outcome={outcome.kind}>
          {outcome.text}
        </p>
      )}
      <StepTimeline workflow={workflow} />
      <div className="table-scroll">
        <table className="steps">
          <TableHead caption={`Steps of workflow ${workflow.workflowId}`} columns={['#', 'Step', 'Runs on', 'State', 'Attempts', 'Notes']} />
          <tbody>
            {workflow.steps.map((s) => (
              <tr key={s.stepIndex} data-step={s.stepId} data-state={s.state}>
                <td>{s.stepIndex + 1}</td>
                <td>
                  <code>{s.stepId}</code>
                </td>
                <td>{s.runsOn}</td>
                <td>
                  <StateBadge state={s.state} />
                </td>
                <td>{s.attempts}</td>
                <td>
                  {[s.destructive ? 'destructive' : null, attestation(s.output), s.rejectedResults > 0 ? `${s.rejectedResults} result(s) rejected` : null]
                    .filter(Boolean)
                    .join(', ')}
                  {s.errorCode && (
                    <span className="problem-inline">
                      {' '}
                      <strong>{s.errorCode}</strong> {s.error}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
