import type { WorkflowView } from '../api/shapes.ts';
import { useNow } from '../components/useNow.ts';
import { durationText, stepBars } from './stepTimeline.ts';
import { stepOutputFacts } from './stepOutputs.ts';

/** While the workflow runs its open bars grow: the axis is redrawn this often. */
const TICK_MS = 1_000;

/**
 * A bar per step on the workflow's own time axis (from each step's start and end in the read model), with what the
 * step's output says it did under it: disks wiped, bytes verified, the image digest written. The bars are drawn for
 * the eye; each row says the same in words (its duration, or "not started"), so nothing is only in a picture.
 */
export function StepTimeline({ workflow }: { workflow: WorkflowView }) {
  const running = workflow.endedAt === null;
  const now = useNow(TICK_MS, running);
  const { axisMs, bars } = stepBars(workflow, now);
  return (
    <figure className="step-timeline" aria-labelledby={`timeline-${workflow.workflowId}`}>
      <figcaption id={`timeline-${workflow.workflowId}`}>
        Step timeline: {durationText(axisMs)}
        {running ? ' so far' : ' in all'}
      </figcaption>
      <ol>
        {workflow.steps.map((s, i) => {
          const bar = bars[i];
          const facts = stepOutputFacts(s.output);
          return (
            <li key={s.stepIndex} data-step={s.stepId} data-state={s.state}>
              <span className="step-name">
                <code>{s.stepId}</code>
              </span>
              <span className="step-track" aria-hidden="true">
                {bar && (
                  <span className={`step-bar state-${s.state}${bar.open ? ' open' : ''}`} style={{ left: `${bar.offsetPct}%`, width: `${bar.widthPct}%` }} />
                )}
              </span>
              <span className="step-duration">
                {bar ? `${durationText(bar.durationMs)}${bar.open ? ' so far' : ''}` : 'not started'}
                {s.attempts > 1 && `, ${s.attempts} attempts`}
              </span>
              {facts.length > 0 && (
                <ul className="step-outputs" aria-label={`Output of ${s.stepId}`}>
                  {facts.map((f) => (
                    <li key={f.text} data-fact={f.kind}>
                      {f.text}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ol>
    </figure>
  );
}
