import type { WorkflowView } from '../api/shapes.ts';

/** How a workflow's end (or coming end) reads: a cancel asked for is not a failure, and "failed" is said only of one. */
export interface WorkflowOutcome {
  readonly kind: 'failed' | 'cancelling' | 'cancelled';
  readonly text: string;
}

export function workflowOutcome(w: Pick<WorkflowView, 'state' | 'error' | 'failedStep'>): WorkflowOutcome | null {
  switch (w.state) {
    case 'failed':
      return { kind: 'failed', text: `Failed${w.failedStep ? ` at ${w.failedStep}` : ''}: ${w.error ?? 'no reason recorded'}` };
    case 'cancelling':
      return { kind: 'cancelling', text: `Cancelling (a running step is finished first): ${w.error ?? 'cancelled'}` };
    case 'cancelled':
      return { kind: 'cancelled', text: `Cancelled: ${w.error ?? 'cancelled'}` };
    default:
      return null;
  }
}
