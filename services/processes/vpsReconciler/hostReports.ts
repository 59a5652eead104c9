import type { HostInstanceReport } from '../../../schemas/agent/hostInstances.ts';

/**
 * The instances one host's `bcd node` reported in a heartbeat that verified against the registered key of that very
 * node's agent (`agentPresence.ts`): an unsigned, foreign or site agent's heartbeat never gets here. `at` is when this
 * process heard it.
 */
export interface HostInstancesHeard {
  /** The site the heartbeat's agent belongs to (absent in tests that do not say). */
  readonly siteId?: string;
  readonly nodeId: string;
  readonly at: number;
  readonly instances: readonly HostInstanceReport[];
}

/**
 * The latest verified report of each host, by node. What a host says counts only for the instances placed on it
 * (`reportFor`): a node agent that lists an instance placed elsewhere is not heard about it, whatever it claims.
 */
export class HostReports {
  readonly #latest = new Map<string, { at: number; byId: ReadonlyMap<string, HostInstanceReport> }>();

  /** @param listeningSince when this process began to hear heartbeats: nobody's silence before it is known. */
  constructor(readonly listeningSince = Date.now()) {}

  heard({ nodeId, at, instances }: HostInstancesHeard): void {
    const before = this.#latest.get(nodeId);
    if (before && before.at > at) return;
    this.#latest.set(nodeId, { at, byId: new Map(instances.map((r) => [r.id, r])) });
  }

  /** How long the host has been silent as this process knows it: since its last report, or since it began to listen. */
  silentForMs(nodeId: string, now: number): number {
    return now - Math.max(this.#latest.get(nodeId)?.at ?? 0, this.listeningSince);
  }

  /** When the host was last heard, and what it said of `instanceId` then (undefined: not listed, or never heard). */
  reportFor(nodeId: string, instanceId: string): { at: number; report: HostInstanceReport | undefined } | undefined {
    const latest = this.#latest.get(nodeId);
    return latest && { at: latest.at, report: latest.byId.get(instanceId) };
  }
}
