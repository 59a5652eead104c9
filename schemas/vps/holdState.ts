import type { LabelSelector } from '../metal/nodeLabels.ts';
import type { HoldHolder } from './holdCommands.ts';
import type { HostResources, PlacementHold } from './placement.ts';
import type { WarmSlot } from './warmPool.ts';

/** One node a hold keeps capacity on, and how much. */
export interface HeldNode {
  readonly nodeId: string;
  readonly resources: HostResources;
}

export interface HoldRecord {
  readonly holdId: string;
  readonly holder: HoldHolder;
  readonly nodes: readonly HeldNode[];
  /** True when the hold keeps whole nodes (no `resources` asked). */
  readonly wholeNodes: boolean;
  readonly selector: LabelSelector;
  readonly durationSeconds: number;
  readonly placedAt: string;
  readonly expiresAt: string;
  readonly releasedAt: string | null;
}

/** A metal-pool instance on one of the site's nodes, and what it takes there (some of it drawn from its holder's holds). */
export interface PlacedInstance {
  readonly instanceId: string;
  readonly tenantId: string;
  readonly poolId: string;
  readonly nodeId: string;
  readonly resources: HostResources;
  readonly fromHolds: readonly { readonly holdId: string; readonly resources: HostResources }[];
  /** Its node was found lost (`InstanceRelocationRequested`) and it is not placed again yet. */
  readonly relocation?: { readonly fromNodeId: string; readonly reason: string };
}

/**
 * A site's book (`bc.evt.vps.holdBook.<siteId>`): every hold placed at the site, released or not, and the metal-pool
 * instances placed on its nodes and not yet removed (absent in states folded before instances were placed).
 */
export interface HoldBookState {
  readonly holds: Readonly<Record<string, HoldRecord>>;
  readonly instances?: Readonly<Record<string, PlacedInstance>>;
  /** Warm slots of the site's metal pools, until taken or reaped (absent in states folded before warm pools). */
  readonly warmSlots?: Readonly<Record<string, WarmSlot>>;
}

export type HoldStatus = 'active' | 'expired' | 'released';

/** A hold stops counting the moment it expires: its status is a function of the time asked, with no event needed. */
export function holdStatusAt(hold: Pick<HoldRecord, 'expiresAt' | 'releasedAt'>, nowMs: number): HoldStatus {
  if (hold.releasedAt !== null) return 'released';
  return Date.parse(hold.expiresAt) > nowMs ? 'active' : 'expired';
}

/** The holds placement must respect at `nowMs`: each active hold's share of each node it keeps. */
export function placementHoldsOf(holds: Iterable<HoldRecord>, nowMs: number): PlacementHold[] {
  const out: PlacementHold[] = [];
  for (const hold of holds) {
    if (holdStatusAt(hold, nowMs) !== 'active') continue;
    const expiresAtMs = Date.parse(hold.expiresAt);
    for (const node of hold.nodes) out.push({ holdId: hold.holdId, nodeId: node.nodeId, holder: hold.holder, resources: node.resources, expiresAtMs });
  }
  return out;
}
