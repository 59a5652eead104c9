import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '../../../schemas/subjects.ts';
import { ANONYMOUS_USER, agentRoleOf } from '../../../schemas/trust/agentIds.ts';
import { AgentRegistrationRequest } from '../../../schemas/trust/commands.ts';
import { CommandBus } from '../../platform/commands/commandBus.ts';
import { serveRequests } from '../../platform/commands/requestResponder.ts';
import { issuesOf, PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RefusalTallyOptions } from '../../platform/refusalTally.ts';
import { countRefusals } from '../refusals/countRefusals.ts';
import { startRefusalCounting } from '../refusals/refusalCounting.ts';
import { startKeyStatusService } from './keyStatusService.ts';
import { registerAgent, registrationOutcome } from './register.ts';

/**
 * The actor a registration is recorded under: the NATS identity the subject names (role, agent id, user key), so the
 * audit says which credential asked. Without broker auth it can only say `nats:anonymous`.
 */
export function registrationActor(agentId: string, userPublicKey: string): string {
  return userPublicKey === ANONYMOUS_USER ? `nats:anonymous:${agentId}` : `nats:${agentRoleOf(agentId) ?? 'agent'}:${agentId}:${userPublicKey}`;
}

function parse(msg: Msg): AgentRegistrationRequest {
  let body: unknown;
  try {
    body = msg.json();
  } catch (cause) {
    throw new PlatformError('MALFORMED_JSON', 'registration is not valid JSON', { cause });
  }
  const parsed = AgentRegistrationRequest.safeParse(body);
  if (!parsed.success) throw new PlatformError('VALIDATION_FAILED', 'invalid agent registration', { issues: issuesOf(parsed.error) });
  return parsed.data;
}

/**
 * Answers `bc.trust.register.<agentId>.<user>` (queue `join`): an agent registering its own key. nats-server 2.9 does
 * not tell a responder who sent a request, so the identity is the subject: under broker permissions an agent's JWT
 * may publish exactly `bc.trust.register.<its agentId>.<its user key>` (`permissionsFor`), and `agent.register`
 * refuses any other agent id (`AGENT_IDENTITY_MISMATCH`) and a new key without the registered key's signature
 * (`AGENT_KEY_UNPROVEN`), each audited as `AgentRegistrationRefused` on the asking agent's subject under its identity,
 * or, beyond its first refusal in a window, counted (`RefusalsCounted`). It also answers
 * `bc.trust.keyStatus.<agentId>.<user>`, the agent's own pending rotation request (`keyStatusService.ts`).
 */
export function startRegistrationService(
  nc: NatsConnection,
  store: EventStore,
  log: Logger,
  options: { bus?: CommandBus; refusals?: RefusalTallyOptions } = {},
) {
  // A process's own bus when it has one (commands on one aggregate serialised process-wide), else one of its own.
  const bus = options.bus ?? new CommandBus(store, [registerAgent, countRefusals], { retries: 5 });
  // Each credential's first refusal in a window is recorded (on its own subject, under its identity); the rest are
  // counted, so no agent grows the log with the rate of its requests.
  const refusals = startRefusalCounting(bus, 'registration', log, options.refusals);
  const sub = serveRequests(
    nc,
    {
      subject: Subjects.allAgentRegistrations,
      queue: 'join',
      what: 'agent registration',
      logRefusals: refusals.logs,
      handle: async (msg) => {
        const [, , , caller, user] = msg.subject.split('.') as [string, string, string, string, string];
        const actor = registrationActor(caller, user);
        const ticket = refusals.admit(actor);
        try {
          const request = parse(msg);
          const result = registrationOutcome(
            await bus.execute({ name: registerAgent.name, payload: { ...request, caller, recordRefusal: ticket.record }, actor }),
          );
          ticket.passed();
          return { ok: true, result };
        } catch (err) {
          throw refusals.failed(ticket, err);
        }
      },
    },
    log,
  );
  // The same agents ask, on a subject of their own, whether their key is to be rotated (`keyStatusService.ts`).
  const status = startKeyStatusService(nc, bus.repository, log);
  return {
    stop: async () => {
      sub.unsubscribe();
      status.unsubscribe();
      await refusals.stop();
    },
  };
}
