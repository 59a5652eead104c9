import type { NatsConnection } from '@nats-io/transport-node';
import { signAgentHeartbeat, type AgentLastError } from '../../schemas/agent/agentHeartbeat.ts';
import type { BcxDriverAdvert } from '../../schemas/bcx/bcxProtocol.ts';
import type { HostInstanceReport } from '../../schemas/agent/hostInstances.ts';
import type { HostModuleReport } from '../../schemas/agent/hostModules.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AgentKeyring } from './agentKeyring.ts';

/** How often an agent inside a machine says it is alive, command or not (the control plane's window is 3 of these). */
export const DEFAULT_PRESENCE_INTERVAL_MS = 10_000;

export interface PresenceSpec {
  agentId: string;
  siteId: string;
  nodeId: string;
  /** Signs each beat with the key it holds then (a rotation switches it). */
  identity: AgentKeyring;
  /** When this agent process started. */
  startedAt: Date;
  /** What the agent reports as its last error (the previous process's, or its own since). */
  lastError(): AgentLastError | undefined;
  /** The bcx drivers running now (`bcd node`'s plugins that said hello). */
  readonly drivers?: () => readonly BcxDriverAdvert[];
  /** The modules installed on the host (`bcd node`), read from its module folders. */
  readonly modules?: () => readonly HostModuleReport[];
  /** The instances the host runs (`bcd node`), read from its instance journal. */
  readonly instances?: () => readonly HostInstanceReport[];
  intervalMs?: number;
}

/**
 * "Alive": a signed `AgentHeartbeat` without a command id on `bc.site.<siteId>.hb.<nodeId>`, at once and then every
 * `intervalMs` until stopped. It is what makes a node `connected` and what a silent host is told apart by: an agent
 * whose process died, hangs in its start or crash-loops sends none (or one per short life, with its last error).
 */
export function startPresenceHeartbeats(nc: NatsConnection, spec: PresenceSpec): { stop(): void } {
  const beat = () => {
    const lastError = spec.lastError();
    const drivers = spec.drivers?.() ?? [];
    const modules = spec.modules?.() ?? [];
    const instances = spec.instances?.() ?? [];
    const signed = signAgentHeartbeat(
      {
        agentId: spec.agentId,
        siteId: spec.siteId,
        nodeId: spec.nodeId,
        sentAt: new Date().toISOString(),
        startedAt: spec.startedAt.toISOString(),
        ...(lastError ? { lastError } : {}),
        ...(drivers.length > 0 ? { drivers: [...drivers] } : {}),
        ...(modules.length > 0 ? { modules: [...modules] } : {}),
        ...(instances.length > 0 ? { instances: [...instances] } : {}),
      },
      spec.identity,
    );
    nc.publish(Subjects.agentHeartbeat(spec.siteId, spec.nodeId), JSON.stringify(signed));
  };
  beat();
  const timer = setInterval(beat, spec.intervalMs ?? DEFAULT_PRESENCE_INTERVAL_MS);
  return { stop: () => clearInterval(timer) };
}
