import { z } from 'zod';
import { Ed25519Signature } from '../ed25519.ts';
import { ResourceId } from '../ids.ts';
import { AgentId } from './agentIds.ts';
import { JoinTokenId } from './joinTokens.ts';

export const AgentRole = z.enum(['site', 'ramdisk', 'node']);
export type AgentRole = z.infer<typeof AgentRole>;

const PublicKey = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 32-byte Ed25519 public key');

/**
 * What an agent sends on its own registration subject (`Subjects.agentRegistration`): its Ed25519 public key (base64
 * of the 32 raw bytes) and, to replace a registered key, `rotationSignature`: the registered key's signature over
 * `rotationMessage(agentId, currentKeyId, newKeyId)`.
 */
export const AgentRegistrationRequest = z
  .object({
    agentId: AgentId,
    role: AgentRole,
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    publicKey: PublicKey,
    rotationSignature: Ed25519Signature.optional(),
  })
  .strict();
export type AgentRegistrationRequest = z.infer<typeof AgentRegistrationRequest>;

/**
 * `agent.register` (the join service and the registration service only; not a `bc.cmd` command). Site agents are
 * `site-<siteId>`; ramdisk agents `ramdisk-<nodeId>-<keyId prefix>` (see `ramdiskAgentId`); node agents
 * `node-<nodeId>`. Re-sending the same key is a no-op. The sender states how it knows who is asking:
 * - `caller`: the agent id the broker bound the request to (its registration subject); it must be `agentId`;
 * - `joinTokenId`: the token the join service just spent for this agent and this key.
 * A new agent registers on either. A different key for a known agent needs `joinTokenId` (a token not used for it
 * before) or `rotationSignature` by the registered key. A refusal is recorded on the caller's own subject.
 */
export const RegisterAgent = AgentRegistrationRequest.extend({
  caller: AgentId.optional(),
  joinTokenId: JoinTokenId.optional(),
  /**
   * False when the sending service counts this caller's refusals instead of recording each (`RefusalTally`): a
   * refusal is then answered with its code and appends nothing.
   */
  recordRefusal: z.boolean().default(true),
}).strict();
export type RegisterAgent = z.infer<typeof RegisterAgent>;

/** What the registered key signs to hand an agent id over to a new key: that agent, that key, no other. */
export const rotationMessage = (agentId: string, currentKeyId: string, newKeyId: string) =>
  Buffer.from(`bc-agent-key/v1/rotate/${agentId}/${currentKeyId}/${newKeyId}`, 'utf8');

/**
 * `agent.rotateKey` (the autonomy engine's `rotate-key` lane, and operators): asks a long-lived agent (site or node)
 * to replace its key. The request is recorded on the agent (`AgentKeyRotationRequested`, naming the key to replace);
 * the agent carries it out through the existing rotation (`agent.register` with the old key's `rotationSignature`),
 * which settles the request. Asking again while the same key is to be replaced is a no-op.
 */
export const RotateAgentKey = z.object({ agentId: AgentId, reason: z.string().min(1).max(400).optional() }).strict();
export type RotateAgentKey = z.infer<typeof RotateAgentKey>;
