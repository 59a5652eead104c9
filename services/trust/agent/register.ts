import { signatureHolds } from '../../../schemas/agent/agentResultCodec.ts';
import type { CommandResult } from '../../../schemas/api.ts';
import { keyIdOf, ramdiskAgentId, siteAgentId } from '../../../schemas/trust/agentIds.ts';
import { RegisterAgent, rotationMessage } from '../../../schemas/trust/commands.ts';
import type { AgentEvent, AgentRegistrationRefusal } from '../../../schemas/trust/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError, PlatformError } from '../../../schemas/platformError.ts';
import { joinTokenAggregate, type JoinTokenState } from '../joinToken/joinToken.ts';
import { agentAggregate } from './agent.ts';

/** True when the join service spent `token` for exactly this agent and this key. */
const tokenAuthorises = (token: JoinTokenState | null, agentId: string, keyId: string) =>
  token?.exists === true && token.usedBy === agentId && token.usedForKeyId === keyId;

/**
 * `agent.register`. The id must be the one the role and key imply, so a ramdisk key can only ever speak for the node
 * its id names (results are authorised against the registered node and site, not against what the result claims).
 * Who may register is decided here, on what the transport established:
 * - a `caller` (the agent id the broker bound the request to) registers only itself (`AGENT_IDENTITY_MISMATCH`);
 * - a `joinTokenId` counts only for the agent and key the join service spent it for, and once;
 * - a known agent's key is replaced only with such a token or the registered key's `rotationSignature`
 *   (`AGENT_KEY_UNPROVEN`).
 * A refusal is appended as `AgentRegistrationRefused` (the audit, with the actor) on the subject of the agent that
 * asked (`caller`), never on the one it named: no credential can grow another agent's history. With
 * `recordRefusal: false` (the registration service counts this caller's refusals) it throws its code instead.
 */
export const registerAgent = defineCommand({
  name: 'agent.register',
  exposure: ['agent'],
  schema: RegisterAgent,
  aggregate: agentAggregate,
  aggregateId: (command) => command.caller ?? command.agentId,
  dependencies: async (command, load) => (command.joinTokenId ? load(joinTokenAggregate, command.joinTokenId) : null),
  decide(command, state, { dependencies: token }): AgentEvent[] {
    if (Buffer.from(command.publicKey, 'base64').length !== 32) throw new DomainError('VALIDATION_FAILED', 'publicKey must be 32 raw bytes');
    const keyId = keyIdOf(command.publicKey);
    const nodeId = command.nodeId ?? null;
    const expected =
      command.role === 'site'
        ? siteAgentId(command.siteId)
        : nodeId
          ? command.role === 'ramdisk'
            ? ramdiskAgentId(nodeId, keyId)
            : `node-${nodeId}`
          : undefined;
    if (expected !== command.agentId) {
      throw new DomainError('VALIDATION_FAILED', `agent id for role ${command.role} must be ${expected ?? '(nodeId required)'}`);
    }
    const key = { agentId: command.agentId, role: command.role, siteId: command.siteId, nodeId, publicKey: command.publicKey, keyId };
    const refuse = (reason: AgentRegistrationRefusal): AgentEvent[] => {
      if (!command.recordRefusal) throw new DomainError(reason, `registration of ${command.agentId} refused: ${reason}`);
      return [{ type: 'AgentRegistrationRefused', data: { ...key, reason } }];
    };
    const { joinTokenId } = command;
    // Decided on the caller's own aggregate: `state` is the named agent's only when the two are one.
    if (command.caller !== undefined && command.caller !== command.agentId) return refuse('AGENT_IDENTITY_MISMATCH');
    if (joinTokenId !== undefined && !tokenAuthorises(token, command.agentId, keyId)) return refuse('AGENT_KEY_UNPROVEN');
    const byToken = joinTokenId !== undefined ? { joinTokenId } : {};
    if (!state.exists) return [{ type: 'AgentRegistered', data: { ...key, ...byToken } }];
    if (state.keyId === keyId) return [];
    const rotated: AgentEvent = { type: 'AgentKeyRotated', data: { ...key, ...byToken, previousKeyId: state.keyId } };
    // A fresh token was checked against this site and node when it was spent: it may move the agent there too.
    if (joinTokenId !== undefined) return state.joinTokenIds.includes(joinTokenId) ? refuse('AGENT_KEY_UNPROVEN') : [rotated];
    if (state.role !== command.role || state.siteId !== command.siteId || state.nodeId !== nodeId) {
      throw new DomainError('ILLEGAL_TRANSITION', `agent ${command.agentId} is registered with another role, site or node`);
    }
    const signature = command.rotationSignature ? Buffer.from(command.rotationSignature, 'base64') : undefined;
    if (!signature || !signatureHolds(rotationMessage(command.agentId, state.keyId, keyId), signature, state.publicKey)) return refuse('AGENT_KEY_UNPROVEN');
    return [rotated];
  },
});

/** The answer a transport gives for an `agent.register` result: its refusal as a coded error, else the result. */
export function registrationOutcome(result: CommandResult): CommandResult {
  const refused = result.events.find((e) => e.type === 'AgentRegistrationRefused')?.data as { reason: AgentRegistrationRefusal; agentId: string } | undefined;
  if (refused) throw new PlatformError(refused.reason, `registration of ${refused.agentId} refused: ${refused.reason}`);
  return result;
}
