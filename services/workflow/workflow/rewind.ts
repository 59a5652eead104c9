import type { ResolvedStep } from '../../../schemas/metal/workflow.ts';
import type { WorkflowEvent } from '../../../schemas/metal/workflowEvents.ts';
import type { ExistingWorkflow } from './workflow.ts';

/**
 * Where a workflow restarts when the agent a step talks to is lost: the boot that started that agent. A node step
 * depends on the last `wait.agentJoined` before it; the boot is the run of site steps right before that wait
 * (`boot.setOnce Pxe`, `power.set cycle` in the built-in profiles), so running them again sets the one-time boot
 * device and cycles the power: the old ramdisk is gone and a new one, with a new key and an empty journal, boots.
 * Undefined when the step depends on no boot of this workflow (an installed host's agent, say).
 */
export function bootBefore(steps: readonly ResolvedStep[], stepIndex: number): number | undefined {
  if (steps[stepIndex]?.runsOn !== 'node') return undefined;
  const wait = steps.slice(0, stepIndex).findLastIndex((s) => s.id === 'wait.agentJoined');
  if (wait < 0) return undefined;
  let boot = wait;
  while (boot > 0 && steps[boot - 1]!.runsOn === 'site') boot--;
  return boot < wait ? boot : undefined;
}

/**
 * Where a ramdisk wait that failed retryably (the boot lost: `BOOT_LOST`, or no join before its timeout) restarts:
 * the run of site steps right before it, so the machine is reset again into a new boot with a new ticket. Waiting
 * again without a new boot could never succeed.
 */
export function bootOfWait(steps: readonly ResolvedStep[], stepIndex: number): number | undefined {
  const wait = steps[stepIndex];
  // An installed host's agent (role node) is waited for after an install, which a retry must not start over.
  if (wait?.id !== 'wait.agentJoined' || ((wait.params as { role?: unknown }).role ?? 'ramdisk') !== 'ramdisk') return undefined;
  let boot = stepIndex;
  while (boot > 0 && steps[boot - 1]!.runsOn === 'site') boot--;
  return boot < stepIndex ? boot : undefined;
}

/**
 * Where the reset of a ramdisk boot that failed retryably restarts (the site step right before the ramdisk wait:
 * `power.set cycle` in the built-in profiles): the boot's first step, as for the wait (`bootOfWait`). The failed
 * attempt may have reset the machine before it failed (a BMC that stopped answering the site's polls), and that reset
 * spent the one-time PXE override: a bare retry would reset the machine into its disk, and the wait would see no boot
 * until `BOOT_LOST`. Running the boot again arms PXE again; it costs a request or two when nothing was reset.
 */
export function bootOfReset(steps: readonly ResolvedStep[], stepIndex: number): number | undefined {
  if (steps[stepIndex]?.runsOn !== 'site') return undefined;
  const boot = bootOfWait(steps, stepIndex + 1);
  return boot !== undefined && boot < stepIndex ? boot : undefined;
}

/** The events that restart `wf` from the boot `toStepIndex` after step `fromStepIndex` lost its agent. */
export function rewindEvents(wf: ExistingWorkflow, fromStepIndex: number, toStepIndex: number, code: string, now: string): WorkflowEvent[] {
  const { workflowId } = wf;
  return [
    { type: 'WorkflowRewound', data: { workflowId, fromStepIndex, toStepIndex, code, at: now } },
    { type: 'StepScheduled', data: { workflowId, stepIndex: toStepIndex, stepId: wf.steps[toStepIndex]!.id, attempt: wf.progress[toStepIndex]!.attempt + 1 } },
  ];
}
