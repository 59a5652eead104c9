import { z } from 'zod';
import { BcxDriverAdvert } from '../bcx/bcxProtocol.ts';
import { AgentLastError } from './agentHeartbeat.ts';
import { HostInstanceReport } from './hostInstances.ts';
import { HostModuleReport } from './hostModules.ts';

/**
 * The last heartbeat of a node's agent (ramdisk or `bcd node`) that verified against its registered key, as the
 * control plane heard it: which agent, when it arrived, when that agent process started and its last error.
 */
export const AgentPresence = z.object({
  agentId: z.string(),
  role: z.enum(['ramdisk', 'node']),
  /** When the heartbeat arrived (the control plane's clock, not the agent's). */
  heardAt: z.string(),
  /** When the agent process that sent it started: a value that keeps changing is an agent that keeps restarting. */
  startedAt: z.string().nullable(),
  lastError: AgentLastError.nullable(),
  /** The bcx drivers the agent said it runs, in that heartbeat. */
  drivers: z.array(BcxDriverAdvert),
  /** The modules the host said it has, in that heartbeat: version, manifest digest, state, probes. */
  modules: z.array(HostModuleReport),
  /** The instances the host said it runs, in that heartbeat: desired state, the runtime's state and addresses. */
  instances: z.array(HostInstanceReport).optional(),
});
export type AgentPresence = z.infer<typeof AgentPresence>;

/** What a read of nodes asks of the heartbeats a process hears: the node's last one, and whether it is within the window. */
export interface AgentPresenceLookup {
  presenceOf(nodeId: string): { presence: AgentPresence; alive: boolean } | undefined;
}
