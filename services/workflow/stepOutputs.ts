import { StepOutputRef } from '../../schemas/plugins/registration.ts';
import type { ExistingWorkflow } from './workflow/workflow.ts';
import { TerminalError } from '../../plugins/sdk/stepErrors.ts';

/**
 * A step's params with every `fromStep` reference replaced by the output of the last earlier step with that id, as
 * the log recorded it. A missing output is a profile error, not something a retry can fix.
 */
export function bindStepOutputs(params: Record<string, unknown>, wf: ExistingWorkflow, stepIndex: number): Record<string, unknown> {
  const bound: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    const ref = StepOutputRef.safeParse(value);
    if (!ref.success) {
      bound[key] = value;
      continue;
    }
    const at = wf.steps
      .slice(0, stepIndex)
      .map((s) => s.id)
      .lastIndexOf(ref.data.$fromStep);
    const output = at >= 0 && wf.progress[at]?.status === 'succeeded' ? wf.progress[at].output : undefined;
    const picked = ref.data.field
      .split('.')
      .reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), output);
    if (picked === undefined)
      throw new TerminalError('VALIDATION_FAILED', `param "${key}" needs ${ref.data.$fromStep}.${ref.data.field}, which no earlier step produced`);
    bound[key] = picked;
  }
  return bound;
}
