import { ramdiskOnlyKinds } from '../../schemas/agent/agentCommand.ts';
import type { StepDefinition } from '../../plugins/sdk/defineStep.ts';
import { TerminalError } from '../../plugins/sdk/stepErrors.ts';
import type { ExistingWorkflow } from './workflow/workflow.ts';

/**
 * Without broker auth (`BC_NATS_AUTH=none`) anyone who reaches NATS registers agents first-come and publishes results,
 * so a wiped or imaged disk reported there proves nothing: a release could be "attested" by whoever registered the
 * ramdisk's id first. A workflow with a step that sends an attestation-bearing kind (`ramdiskOnlyKinds`: `disk.wipe`,
 * `image.write`) is therefore refused at its first step, before anything reaches the machine: deploys, releases and
 * retirements fail with `BROKER_AUTH_REQUIRED` in that mode.
 */
export function refuseAttestedWorkflowWithoutBrokerAuth(
  natsAuth: 'operator' | 'none',
  wf: ExistingWorkflow,
  steps: ReadonlyMap<string, StepDefinition<string, any, any>>,
): void {
  if (natsAuth !== 'none') return;
  const attested = wf.steps.find((step) => steps.get(step.id)?.sends.some((kind) => ramdiskOnlyKinds.has(kind)));
  if (attested) {
    throw new TerminalError(
      'BROKER_AUTH_REQUIRED',
      `${wf.operation} runs ${attested.id}, whose result is an attestation: refused while broker auth is off (BC_NATS_AUTH=none); run with BC_NATS_AUTH=operator`,
    );
  }
}
