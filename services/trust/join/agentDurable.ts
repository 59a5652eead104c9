import type { JetStreamManager } from '@nats-io/jetstream';
import { ensureCommandDurable } from '../../platform/nats/commandDurable.ts';
import { agentCommandFilterFor, agentDurableFor, type RoleGrant } from '../broker/permissions.ts';

/** How long JetStream waits for an agent's ack; agents heartbeat at a third of it (`daemon/agent/commandConsumer.ts`). */
export const AGENT_ACK_WAIT_MS = 30_000;

/**
 * Creates the durable an agent pulls from, with the filter its grant allows; agents may only look it up. A site's
 * durable outlives its agent's restarts and re-joins (deliver all, kept); a ramdisk's belongs to one boot identity
 * and sees only commands sent after it exists (deliver new), as when the agent made it itself.
 */
export async function ensureAgentDurable(
  jsm: JetStreamManager,
  grant: Extract<RoleGrant, { role: 'site' | 'node' }>,
  ackWaitMs = AGENT_ACK_WAIT_MS,
): Promise<string> {
  const durable = agentDurableFor(grant);
  await ensureCommandDurable(jsm, { durable, filterSubject: agentCommandFilterFor(grant), deliver: grant.role === 'site' ? 'all' : 'new', ackWaitMs });
  return durable;
}
