import { z } from 'zod';

/** An approval batch as the read model serves it; `state` is computed at read time (expiry is a matter of the clock). */
export const ApprovalView = z.object({
  workflowId: z.string(),
  nodeId: z.string(),
  operation: z.string(),
  digest: z.string(),
  items: z.array(z.object({ stepIndex: z.number().int(), stepId: z.string() })),
  threshold: z.number().int(),
  approverIds: z.array(z.string()),
  grantedBy: z.array(z.string()),
  state: z.enum(['pending', 'approved', 'rejected', 'expired']),
  rejectedBy: z.string().nullable(),
  rejectionReason: z.string().nullable(),
  requestedAt: z.string(),
  expiresAt: z.string(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;
