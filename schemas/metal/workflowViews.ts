import { z } from 'zod';

/** One step of a workflow as the read model serves it; `output` is the step's JSON result (a wipe's carries `attested`). */
export const WorkflowStepView = z.object({
  stepIndex: z.number().int(),
  stepId: z.string(),
  runsOn: z.string(),
  destructive: z.boolean(),
  params: z.record(z.string(), z.unknown()),
  state: z.enum(['pending', 'scheduled', 'running', 'retrying', 'succeeded', 'failed']),
  attempts: z.number().int(),
  output: z.unknown(),
  errorCode: z.string().nullable(),
  error: z.string().nullable(),
  rejectedResults: z.number().int(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});
export type WorkflowStepView = z.infer<typeof WorkflowStepView>;

export const WorkflowView = z.object({
  workflowId: z.string(),
  nodeId: z.string(),
  siteId: z.string(),
  operation: z.string(),
  profile: z.object({ id: z.string(), version: z.number().int() }),
  /** `cancelling`: `metal.cancel` waits for a running destructive step; `cancelled`: stopped, `error` says why. */
  state: z.enum(['running', 'cancelling', 'completed', 'failed', 'cancelled']),
  failedStep: z.string().nullable(),
  error: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  lastSeq: z.number().int(),
  steps: z.array(WorkflowStepView),
});
export type WorkflowView = z.infer<typeof WorkflowView>;
