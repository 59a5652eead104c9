import type { WorkflowStepView, WorkflowView } from '../api/shapes.ts';

/** Where one step's bar sits on its workflow's time axis, in percent of the axis; null for a step that never started. */
export interface StepBar {
  readonly stepIndex: number;
  readonly offsetPct: number;
  readonly widthPct: number;
  /** From its first attempt's start to its last end (or to `now` while it runs). */
  readonly durationMs: number;
  /** Still running: the bar grows to `now`. */
  readonly open: boolean;
}

const time = (iso: string | null): number | null => {
  const t = iso === null ? NaN : Date.parse(iso);
  return Number.isFinite(t) ? t : null;
};

/** A bar too short to see (a control-plane step of milliseconds beside a 20-minute write) still shows as a sliver. */
const MIN_WIDTH_PCT = 0.6;

/**
 * The workflow's axis runs from its start to its end, or to `now` while it runs (so running bars grow), and never ends
 * before a step does. Each step spans its first start to its last end (`WorkflowStepView`: a retried step keeps the
 * first start); one without an end runs to `now` if the workflow still runs, else to the workflow's end.
 */
export function stepBars(workflow: Pick<WorkflowView, 'startedAt' | 'endedAt' | 'steps'>, now: number): { axisMs: number; bars: (StepBar | null)[] } {
  const start = time(workflow.startedAt) ?? now;
  const ended = time(workflow.endedAt);
  const stepEnds = workflow.steps.map((s: WorkflowStepView) => time(s.endedAt) ?? -Infinity);
  const end = Math.max(ended ?? now, ...stepEnds, start + 1);
  const axisMs = end - start;
  const bars = workflow.steps.map((s): StepBar | null => {
    const from = time(s.startedAt);
    if (from === null) return null;
    const running = s.state === 'running' || s.state === 'scheduled' || s.state === 'retrying';
    const open = running && ended === null;
    const to = open ? end : (time(s.endedAt) ?? ended ?? end);
    const offsetPct = Math.min(100, Math.max(0, ((from - start) / axisMs) * 100));
    const widthPct = Math.min(100 - offsetPct, Math.max(MIN_WIDTH_PCT, ((Math.max(to, from) - from) / axisMs) * 100));
    return { stepIndex: s.stepIndex, offsetPct, widthPct, durationMs: Math.max(0, to - from), open };
  });
  return { axisMs, bars };
}

/** A duration as operators say it: `850 ms`, `12.4 s`, `3 min 5 s`, `1 h 02 min`. */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const s = Math.round(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3_600)} h ${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')} min`;
}
