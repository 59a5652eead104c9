import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AgentIdentity } from './identity.ts';

/** Says "still working" for the command an agent runs, until the returned function is called. */
export interface CommandHeartbeats {
  whileRunning(command: Pick<AgentCommand, 'commandId' | 'siteId' | 'nodeId'>): () => void;
}

/** How often an agent inside a machine says it is alive while a command runs. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/**
 * Signed heartbeats of an agent inside a machine (`AgentHeartbeat` on `bc.site.<siteId>.hb.<nodeId>`, core NATS): one
 * when a command starts, then every `intervalMs` until it ends. They are how the executor waiting out a 30-minute
 * `image.write` tells a ramdisk that is still writing from one that died: silence for
 * `BC_AGENT_HEARTBEAT_TIMEOUT_MS` fails the attempt with `AGENT_LOST`. Time-based on purpose: a slow disk is alive.
 */
export function commandHeartbeats(
  nc: NatsConnection,
  agent: { agentId: string; identity: AgentIdentity },
  intervalMs = DEFAULT_HEARTBEAT_INTERVAL_MS,
): CommandHeartbeats {
  return {
    whileRunning(command) {
      const beat = () => {
        const signed = signAgentHeartbeat(
          { agentId: agent.agentId, siteId: command.siteId, nodeId: command.nodeId, commandId: command.commandId, sentAt: new Date().toISOString() },
          agent.identity,
        );
        // Published while disconnected, it waits in the client's buffer: a late heartbeat is still news.
        nc.publish(Subjects.agentHeartbeat(command.siteId, command.nodeId), JSON.stringify(signed));
      };
      beat();
      const timer = setInterval(beat, intervalMs);
      return () => clearInterval(timer);
    },
  };
}
