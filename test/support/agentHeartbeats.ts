import type { NatsConnection } from '@nats-io/transport-node';
import { openAgentHeartbeat, type AgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';

/**
 * Resolves with the first heartbeat of one node's agent whose command id ends with `commandIdSuffix` (e.g. `-s3-a1`:
 * the first attempt of step 3 is running on the machine). Subscribe before starting what sends it.
 */
export function heartbeatSeen(nc: NatsConnection, siteId: string, nodeId: string, commandIdSuffix: string): Promise<AgentHeartbeat> {
  return new Promise((resolve) => {
    const sub = nc.subscribe(Subjects.agentHeartbeat(siteId, nodeId), {
      callback: (_err, msg) => {
        const heartbeat = openAgentHeartbeat(msg.json())?.heartbeat;
        if (!heartbeat?.commandId?.endsWith(commandIdSuffix)) return;
        sub.unsubscribe();
        resolve(heartbeat);
      },
    });
  });
}
