import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { WorkflowId } from '../metal/workflowCommands.ts';
import { RemediationRequest } from '../metal/nodeCommands.ts';

/** The states an instance may be remediated from and is returned to afterwards: at rest, as its tenant wants it. */
export const RemediableInstanceState = z.enum(['running', 'stopped']);
export type RemediableInstanceState = z.infer<typeof RemediableInstanceState>;

/**
 * `vps.remediateInstance` (operators, tenants for their own instances, the autonomy engine): run a built-in or plugin
 * profile against the instance as a `remediate` workflow; the instance returns to the state it was in. Only
 * control-plane steps can act on an instance (there is no BMC and no site agent for it); a profile with a site or node
 * step is refused (`UNSUPPORTED`), one with a destructive step unless `allowDestructive` (`NOT_PERMITTED`). Refused with
 * `INSTANCE_BUSY` while another operation runs on the instance: a remediation, or a start, stop or create the provider
 * has not reached yet.
 */
export const RemediateInstance = RemediationRequest.extend({ tenantId: ResourceId, instanceId: ResourceId }).strict();
export type RemediateInstance = z.infer<typeof RemediateInstance>;

/** `vps.completeRemediation` (orchestrator): the instance's remediation workflow completed; it returns to its prior state. */
export const CompleteInstanceRemediation = z.object({ tenantId: ResourceId, instanceId: ResourceId, workflowId: WorkflowId }).strict();
export type CompleteInstanceRemediation = z.infer<typeof CompleteInstanceRemediation>;

/**
 * `vps.failRemediation` (orchestrator): the workflow failed, or could never start. The instance needs attention: the
 * reconciler leaves it as the remediation left it until its tenant or an operator starts, stops, deletes or remediates it.
 */
export const FailInstanceRemediation = CompleteInstanceRemediation.extend({
  reason: z.string().max(1_000),
  failedStep: z.string().max(200).nullable(),
}).strict();
export type FailInstanceRemediation = z.infer<typeof FailInstanceRemediation>;
