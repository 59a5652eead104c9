import { DomainError } from '../../../schemas/platformError.ts';
import { type WipeAttestation } from './attestation.ts';
import { type ExistingWorkflow, type WorkflowState } from './workflow.ts';

export function requireRunningStep(state: WorkflowState, workflowId: string, stepIndex: number): ExistingWorkflow {
  if (!state.exists) throw new DomainError('NOT_FOUND', `workflow ${workflowId} does not exist`);
  if (state.status !== 'running') throw new DomainError('ILLEGAL_TRANSITION', `workflow ${workflowId} is ${state.status}`);
  if (!state.steps[stepIndex]) throw new DomainError('VALIDATION_FAILED', `workflow ${workflowId} has no step ${stepIndex}`);
  return state;
}

/**
 * A wipe's output, decided here and never taken from the sender: an attested wipe shows the signed report itself and
 * the ramdisk that signed it; an unattested one shows what the executor passed on and why it attests nothing
 * (`unattestedReason`).
 */
export function wipeOutput(output: unknown, attestation: WipeAttestation): Record<string, unknown> {
  if (attestation.attested) return { ...attestation.report, attested: true, agentId: attestation.agentId };
  const fields =
    typeof output === 'object' && output !== null && !Array.isArray(output) ? { ...(output as Record<string, unknown>) } : { result: output ?? null };
  return { ...fields, attested: false, unattestedReason: attestation.reason };
}
