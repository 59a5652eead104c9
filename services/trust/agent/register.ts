import { keyIdOf, ramdiskAgentId, siteAgentId } from '../../../schemas/trust/agentIds.ts';
import { RegisterAgent } from '../../../schemas/trust/commands.ts';
import type { AgentEvent } from '../../../schemas/trust/events.ts';
import { defineCommand } from '../../commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { agentAggregate } from './agent.ts';

/**
 * `agent.register`. The id must be the one the role and key imply, so a ramdisk key can only ever speak for the node
 * its id names (results are authorised against the registered node and site, not against what the result claims).
 */
export const registerAgent = defineCommand({
  name: 'agent.register',
  schema: RegisterAgent,
  aggregate: agentAggregate,
  aggregateId: (command) => command.agentId,
  decide(command, state): AgentEvent[] {
    if (Buffer.from(command.publicKey, 'base64').length !== 32) throw new DomainError('VALIDATION_FAILED', 'publicKey must be 32 raw bytes');
    const keyId = keyIdOf(command.publicKey);
    const nodeId = command.nodeId ?? null;
    const expected =
      command.role === 'site' ? siteAgentId(command.siteId) : nodeId ? (command.role === 'ramdisk' ? ramdiskAgentId(nodeId, keyId) : `node-${nodeId}`) : undefined;
    if (expected !== command.agentId) {
      throw new DomainError('VALIDATION_FAILED', `agent id for role ${command.role} must be ${expected ?? '(nodeId required)'}`);
    }
    const key = { agentId: command.agentId, role: command.role, siteId: command.siteId, nodeId, publicKey: command.publicKey, keyId };
    if (!state.exists) return [{ type: 'AgentRegistered', data: key }];
    if (state.keyId === keyId) return [];
    if (state.role !== command.role || state.siteId !== command.siteId || state.nodeId !== nodeId) {
      throw new DomainError('ILLEGAL_TRANSITION', `agent ${command.agentId} is registered with another role, site or node`);
    }
    return [{ type: 'AgentKeyRotated', data: { ...key, previousKeyId: state.keyId } }];
  },
});
