import type { WorkflowView } from '../api/shapes.ts';

/** The machine's power as a step last saw it: `power.get`'s read or `power.set`'s state after. */
export interface PowerReading {
  readonly state: string;
  readonly at: string;
  readonly workflowId: string;
  readonly stepId: string;
}

const reading = (output: unknown): string | null => {
  if (!output || typeof output !== 'object') return null;
  const o = output as { powerState?: unknown; after?: unknown };
  const state = typeof o.powerState === 'string' ? o.powerState : typeof o.after === 'string' ? o.after : null;
  return state && /^[A-Za-z]{1,20}$/.test(state) ? state : null;
};

/**
 * The newest power reading among a node's workflows: every BMC power read or set the site agent ran for it answers
 * with the power state (`{ powerState }` from `power.get`, `{ after }` from `power.set`), and the read model keeps
 * each step's output and end time. Null when no step of these workflows touched the power.
 */
export function lastPowerReading(workflows: readonly Pick<WorkflowView, 'workflowId' | 'steps'>[]): PowerReading | null {
  let newest: PowerReading | null = null;
  for (const w of workflows) {
    for (const s of w.steps) {
      const state = s.state === 'succeeded' && s.endedAt ? reading(s.output) : null;
      if (state && (!newest || Date.parse(s.endedAt!) > Date.parse(newest.at))) newest = { state, at: s.endedAt!, workflowId: w.workflowId, stepId: s.stepId };
    }
  }
  return newest;
}
