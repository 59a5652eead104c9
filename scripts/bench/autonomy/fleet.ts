import { emptyFleetSnapshot, type FleetSnapshot, type SnapshotNode } from '../../../schemas/autonomy/snapshot.ts';

/**
 * A simulated fleet for the autonomy benchmark: a fixed set of nodes with lost BMCs and failed nodes, plus nodes
 * whose BMC flaps (a different set each pass), all derived from a seed so two runs see the same fleet.
 */
export class SimulatedFleet {
  readonly nodes: SnapshotNode[];
  readonly #lostBmc: ReadonlySet<string>;
  #flapping = new Set<string>();
  #rng: number;

  constructor(size: number, options: { bmcLoss: number; failed: number; flapping: number; seed: number }) {
    this.#rng = options.seed;
    const ids = Array.from({ length: size }, (_, i) => `sim-${String(i).padStart(5, '0')}`);
    const failed = new Set(this.#pick(ids, Math.round(size * options.failed)));
    this.#lostBmc = new Set(this.#pick(ids, Math.round(size * options.bmcLoss)));
    this.flappingCount = Math.round(size * options.flapping);
    this.nodes = ids.map((nodeId) => ({
      nodeId,
      siteId: 'sim',
      state: failed.has(nodeId) ? 'failed' : 'deployed',
      maintenance: false,
      maintenanceSource: null,
      failure: failed.has(nodeId) ? { operation: 'deploy', reason: 'image.write failed', failedStep: 'image.write' } : null,
      waitingReason: null,
      updatedAt: new Date().toISOString(),
      agent: 'bcd' as const,
      controlPlane: false,
    }));
  }

  readonly flappingCount: number;

  /** Moves to the next pass: a new set of flapping BMCs (unless frozen, for the steady phase). */
  advance(frozen: boolean): void {
    if (!frozen)
      this.#flapping = new Set(
        this.#pick(
          this.nodes.map((n) => n.nodeId),
          this.flappingCount,
        ),
      );
  }

  snapshot(now: Date): FleetSnapshot {
    const bmc = this.nodes.map((n) => ({
      nodeId: n.nodeId,
      siteId: n.siteId,
      consecutiveFailures: this.#lostBmc.has(n.nodeId) || this.#flapping.has(n.nodeId) ? 3 : 0,
      lastError: this.#lostBmc.has(n.nodeId) ? 'ECONNREFUSED' : null,
      at: now.toISOString(),
    }));
    // No heartbeats listened to and nothing pinned: the bench measures the BMC and failure lanes, not host liveness or modules.
    return { ...emptyFleetSnapshot(now.toISOString()), nodes: this.nodes, bmc };
  }

  #pick(ids: readonly string[], n: number): string[] {
    const pool = [...ids];
    const out: string[] = [];
    for (let i = 0; i < n && pool.length > 0; i++) {
      this.#rng = (this.#rng * 1103515245 + 12345) & 0x7fffffff;
      out.push(pool.splice(this.#rng % pool.length, 1)[0]!);
    }
    return out;
  }
}
