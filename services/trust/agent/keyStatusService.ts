import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '../../../schemas/subjects.ts';
import { AgentId } from '../../../schemas/trust/agentIds.ts';
import type { AgentKeyStatus } from '../../../schemas/trust/agentKeyStatus.ts';
import type { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { serveRequests } from '../../platform/commands/requestResponder.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { Logger } from '../../platform/logger.ts';
import { agentAggregate } from './agent.ts';

/** What the control plane tells `agentId` about its key: the registered key id and whether it is to be replaced. */
export async function agentKeyStatus(repository: AggregateRepository, agentId: string): Promise<AgentKeyStatus> {
  const { state } = await repository.load(agentAggregate, agentId);
  if (!state.exists) return { agentId, keyId: null, rotationRequested: false };
  return { agentId, keyId: state.keyId, rotationRequested: state.rotationRequestedFor === state.keyId };
}

/**
 * Answers `bc.trust.keyStatus.<agentId>.<user>` (queue `join`): the agent's own pending rotation request, which long-lived
 * agents ask for now and then (`daemon/agent/keyRotation.ts`). The subject is the identity, as for registrations: under
 * broker permissions an agent may publish only its own, and the answer names nothing but that agent's public key id.
 * Reads only; the rotation itself is an `agent.register` signed by the current key.
 */
export function startKeyStatusService(nc: NatsConnection, repository: AggregateRepository, log: Logger) {
  return serveRequests(
    nc,
    {
      subject: Subjects.allAgentKeyStatuses,
      queue: 'join',
      what: 'agent key status',
      logRefusals: true,
      handle: async (msg) => {
        const agentId = msg.subject.split('.')[3];
        if (!AgentId.safeParse(agentId).success) throw new PlatformError('VALIDATION_FAILED', 'the subject names no agent id');
        return { ok: true, status: await agentKeyStatus(repository, agentId!) };
      },
    },
    log,
  );
}
