import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { heartbeatSignedBy, openAgentHeartbeat, type AgentHeartbeat, type SignedAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { Logger } from '../platform/logger.ts';
import { watchConnectionState, type ConnectionState } from '../platform/nats/connectionState.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
import { RetryableError } from '../../plugins/sdk/stepErrors.ts';

/** One waiting attempt's view of its agent (disposed when the wait ends): `AGENT_LOST` once it was silent too long. */
export interface LivenessCheck extends Disposable {
  /** Throws `RetryableError('AGENT_LOST')` when no heartbeat verified for the timeout. */
  check(): void;
  /** How long the wait may sleep before the next `check()` could find the agent lost. */
  msUntilDue(): number;
}

export interface AgentLiveness {
  follow(command: AgentCommand): LivenessCheck;
  stop(): Promise<void>;
}

interface Followed {
  readonly command: AgentCommand;
  lastAliveMs: number;
}

/**
 * Follows the heartbeats agents inside machines publish while they run a command (`bc.site.*.hb.*`, one core
 * subscription per executor process) for the commands this process waits on. A heartbeat counts only when it names
 * the awaited command and verifies against the registered key of an agent of that very node (a ramdisk or node
 * agent, never a site agent; the addressed agent only, when the command names one): a stranger, or an installed
 * host's agent, cannot keep a dead ramdisk's step waiting. The clock starts when the wait
 * starts and again whenever this process's own connection comes back, so an outage on the control plane's side is
 * never blamed on the agent.
 */
export function startAgentLiveness(
  nc: NatsConnection,
  deps: { repository: AggregateRepository; timeoutMs: number; log: Logger; now?: () => number; connection?: ConnectionState },
): AgentLiveness {
  const now = deps.now ?? Date.now;
  const connection = deps.connection ?? watchConnectionState(nc, now);
  const followed = new Map<string, Followed>();
  const sub: Subscription = nc.subscribe(Subjects.allAgentHeartbeats, {
    callback: (_err, msg) => {
      let data: unknown;
      try {
        data = msg.json();
      } catch {
        return;
      }
      const opened = openAgentHeartbeat(data);
      const entry = opened ? followed.get(opened.heartbeat.commandId) : undefined;
      if (opened && entry) {
        const receivedAtMs = now();
        verified(entry.command, opened).then(
          (ok) => {
            if (ok) entry.lastAliveMs = Math.max(entry.lastAliveMs, receivedAtMs);
            else
              deps.log.warn(
                { commandId: entry.command.commandId, agentId: opened.heartbeat.agentId },
                'heartbeat refused: not signed by an agent of this node',
              );
          },
          (err: unknown) => deps.log.debug({ err, commandId: entry.command.commandId }, 'heartbeat not verified now'),
        );
      }
    },
  });

  const verified = async (command: AgentCommand, { heartbeat, signed }: { heartbeat: AgentHeartbeat; signed: SignedAgentHeartbeat }): Promise<boolean> => {
    if (heartbeat.siteId !== command.siteId || heartbeat.nodeId !== command.nodeId) return false;
    // A command addressed to one agent (the ramdisk the workflow booted) lives only by that agent's heartbeats.
    if (command.agentId !== undefined && heartbeat.agentId !== command.agentId) return false;
    const ofThisNode = ({ state: agent }: { state: AgentState }) =>
      agent.exists && agent.role !== 'site' && agent.siteId === command.siteId && agent.nodeId === command.nodeId && heartbeatSignedBy(signed, agent.publicKey);
    return deps.repository.judged(agentAggregate, heartbeat.agentId, ofThisNode, (ok) => ok);
  };

  return {
    follow(command) {
      const entry: Followed = { command, lastAliveMs: now() };
      followed.set(command.commandId, entry);
      const silentSince = () => Math.max(entry.lastAliveMs, connection.upSinceMs());
      return {
        check() {
          if (!connection.connected()) return;
          const silentMs = now() - silentSince();
          if (silentMs >= deps.timeoutMs) {
            throw new RetryableError('AGENT_LOST', `no heartbeat from the agent running ${command.commandId} for ${Math.round(silentMs / 1000)} s`, {
              retryAfterMs: 0,
            });
          }
        },
        msUntilDue: () => Math.max(0, silentSince() + deps.timeoutMs - now()) + 50,
        [Symbol.dispose]: () => {
          if (followed.get(command.commandId) === entry) followed.delete(command.commandId);
        },
      };
    },
    stop: async () => sub.unsubscribe(),
  };
}
