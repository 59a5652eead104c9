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
  /** Rejects with `RetryableError('AGENT_LOST')` when no heartbeat verified for the timeout. */
  check(): Promise<void>;
  /** How long the wait may sleep before the next `check()` could find the agent lost. */
  msUntilDue(): number;
}

export interface AgentLiveness {
  follow(command: AgentCommand): LivenessCheck;
  stop(): Promise<void>;
}

interface Followed {
  readonly command: AgentCommand;
  /** When the latest heartbeat that verified arrived (or the wait started). */
  lastAliveMs: number;
  /** The latest heartbeat, not verified yet: verified when the next one arrives, or when the wait comes due. */
  unverified: (OpenedHeartbeat & { receivedAtMs: number }) | undefined;
  /** The verifications started for this wait, settled. */
  settled: Promise<void>;
}

type OpenedHeartbeat = { heartbeat: AgentHeartbeat; signed: SignedAgentHeartbeat };

/**
 * Follows the heartbeats agents inside machines publish while they run a command (`bc.site.*.hb.*`, one core
 * subscription per executor process) for the commands this process waits on. A heartbeat counts only when it names
 * the awaited command and verifies against the registered key of an agent of that very node (a ramdisk or node
 * agent, never a site agent; the addressed agent only, when the command names one): a stranger, or an installed
 * host's agent, cannot keep a dead ramdisk's step waiting. The clock starts when the wait starts and again whenever
 * this process's own connection comes back, so an outage on the control plane's side is never blamed on the agent.
 *
 * A heartbeat is verified (a read of the agent and an Ed25519 check) only once it could matter: when the next one
 * arrives, or when the wait comes due and would otherwise find the agent lost. A command answered within one
 * heartbeat interval, as most are, costs none. None is ever dropped unverified, so a flood of forged heartbeats costs
 * what it did before and cannot push a valid one out.
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
      const commandId = opened?.heartbeat.commandId;
      const entry = commandId ? followed.get(commandId) : undefined;
      if (opened && entry) {
        void settle(entry);
        entry.unverified = { ...opened, receivedAtMs: now() };
      }
    },
  });

  /** Verifies the heartbeat `entry` holds unverified, if any; resolves once every verification started settled. */
  const settle = (entry: Followed): Promise<void> => {
    const beat = entry.unverified;
    entry.unverified = undefined;
    if (!beat) return entry.settled;
    const verification = verified(entry.command, beat).then(
      (ok) => {
        if (ok) entry.lastAliveMs = Math.max(entry.lastAliveMs, beat.receivedAtMs);
        else deps.log.warn({ commandId: entry.command.commandId, agentId: beat.heartbeat.agentId }, 'heartbeat refused: not signed by an agent of this node');
      },
      (err: unknown) => deps.log.debug({ err, commandId: entry.command.commandId }, 'heartbeat not verified now'),
    );
    return (entry.settled = Promise.all([entry.settled, verification]).then(() => undefined));
  };

  const verified = async (command: AgentCommand, { heartbeat, signed }: OpenedHeartbeat): Promise<boolean> => {
    if (heartbeat.siteId !== command.siteId || heartbeat.nodeId !== command.nodeId) return false;
    // A command addressed to one agent (the ramdisk the workflow booted) lives only by that agent's heartbeats.
    if (command.agentId !== undefined && heartbeat.agentId !== command.agentId) return false;
    const ofThisNode = ({ state: agent }: { state: AgentState }) =>
      agent.exists && agent.role !== 'site' && agent.siteId === command.siteId && agent.nodeId === command.nodeId && heartbeatSignedBy(signed, agent.publicKey);
    return deps.repository.judged(agentAggregate, heartbeat.agentId, ofThisNode, (ok) => ok);
  };

  return {
    follow(command) {
      const entry: Followed = { command, lastAliveMs: now(), unverified: undefined, settled: Promise.resolve() };
      followed.set(command.commandId, entry);
      const silentSince = () => Math.max(entry.lastAliveMs, connection.upSinceMs());
      const silentMs = () => now() - silentSince();
      return {
        async check() {
          if (!connection.connected()) return;
          if (silentMs() >= deps.timeoutMs) await settle(entry);
          if (silentMs() >= deps.timeoutMs) {
            throw new RetryableError('AGENT_LOST', `no heartbeat from the agent running ${command.commandId} for ${Math.round(silentMs() / 1000)} s`, {
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
