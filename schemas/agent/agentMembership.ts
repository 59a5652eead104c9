import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { AgentId } from '../trust/agentIds.ts';

/**
 * What a long-lived agent (`bcd site`, `bcd node`) remembers of its join, in `<stateDir>/membership.json` (mode 0600,
 * next to `identity.key`): the token is spent, so a restart resumes on the durable the control plane made for its key,
 * with the NATS credentials the join issued (broker mode), instead of joining again.
 */
export const AgentMembership = z
  .object({
    siteId: ResourceId,
    /** Set for `bcd node`: the node it is the agent of. */
    nodeId: ResourceId.optional(),
    agentId: AgentId,
    durable: z.string().min(1),
    /** Joined under broker permissions: the credentials (`.creds` text with the user seed) and inbox prefix it connects with. */
    credentials: z
      .object({ creds: z.string().min(1), inboxPrefix: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();
export type AgentMembership = z.infer<typeof AgentMembership>;
