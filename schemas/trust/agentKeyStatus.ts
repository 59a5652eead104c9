import { z } from 'zod';
import { AgentId } from './agentIds.ts';

/**
 * The answer on `bc.trust.keyStatus.<agentId>.<user>`: the agent's registered key and whether the control plane
 * asked for it to be replaced (`agent.rotateKey`). `keyId` is null for an agent that is not registered. The agent
 * rotates only when `rotationRequested` is true and `keyId` is the key it holds (a request names the key it is about).
 */
export const AgentKeyStatus = z
  .object({
    agentId: AgentId,
    keyId: z.string().nullable(),
    rotationRequested: z.boolean(),
  })
  .strict();
export type AgentKeyStatus = z.infer<typeof AgentKeyStatus>;

/** The reply shape of the key-status request (the platform's `{ ok, … }` answer). */
export const AgentKeyStatusReply = z.union([
  z.object({ ok: z.literal(true), status: AgentKeyStatus }),
  z.object({ ok: z.literal(false), error: z.object({ code: z.string(), detail: z.string().optional() }).passthrough() }),
]);
export type AgentKeyStatusReply = z.infer<typeof AgentKeyStatusReply>;
