import { RotateAgentKey } from '../../../schemas/trust/commands.ts';
import type { AgentEvent } from '../../../schemas/trust/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { agentAggregate } from './agent.ts';

/**
 * `agent.rotateKey`: records that a long-lived agent should replace its current key. It mints nothing and trusts
 * nothing new: the new key is accepted only through `agent.register` with the old key's rotation signature, which
 * settles the request. A ramdisk agent's key lives for one boot (its id names the key): nothing to rotate.
 */
export const rotateAgentKey = defineCommand({
  name: 'agent.rotateKey',
  exposure: ['operator', 'engine'],
  schema: RotateAgentKey,
  aggregate: agentAggregate,
  aggregateId: (command) => command.agentId,
  decide(command, state): AgentEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `agent ${command.agentId} is not registered`);
    if (state.role === 'ramdisk') throw new DomainError('ILLEGAL_TRANSITION', `ramdisk agent ${state.agentId} has a key per boot; nothing to rotate`);
    if (state.rotationRequestedFor === state.keyId) return [];
    return [{ type: 'AgentKeyRotationRequested', data: { agentId: state.agentId, keyId: state.keyId, reason: command.reason ?? 'requested' } }];
  },
});
