import type { VpsEvent } from '../../../schemas/vps/events.ts';
import type { WarmSetting, WarmSlot } from '../../../schemas/vps/warmPool.ts';
import type { HostInstancesHeard } from './hostReports.ts';

/** One warm slot on the site's book, with what this process sent its node (in memory: a restart sends again). */
export interface KeptSlot extends WarmSlot {
  readonly siteId: string;
  /** When the last `instance.apply` preparing it went out. */
  preparedSentAt?: number;
}

/** A slot that left the book (reaped) or an orphan, on its node until a heartbeat of it no longer lists it. */
export interface SlotRemoval {
  readonly siteId: string;
  readonly nodeId: string;
  readonly slotId: string;
  /** Reaped because its node is lost: sent again only when that node is heard listing it. */
  readonly nodeLost?: boolean;
  removeSentAt?: number;
}

/**
 * How long a node must go on listing a slot nobody keeps before it is removed as an orphan: heartbeats heard while this
 * process still replays the log may list slots whose events it has not folded yet.
 */
export const ORPHAN_GRACE_MS = 10_000;

/** The flavor and image a slot is kept for, as one key. */
export const warmKey = (flavorId: string, image: string) => `${flavorId}\u0000${image}`;

/**
 * The warm pools as the reconciler keeps them, folded from `bc.evt.vps.>`: each pool's setting, the slots on the books
 * (`slots`), how many slots each pool, flavor and image ever had placed (the next slot's id derives from it, so a
 * pass repeated before its event came round asks for the same slot, a no-op), the slots taken by a create whose node
 * may still list them under the slot's id (never orphans), and the slots to remove from their nodes.
 */
export class WarmSlots {
  readonly settings = new Map<string, WarmSetting>();
  readonly slots = new Map<string, KeptSlot>();
  readonly placedCount = new Map<string, number>();
  /** Slot id → node, until a heartbeat of that node no longer lists the slot (the create's apply renamed it). */
  readonly taken = new Map<string, string>();
  /** `<nodeId>/<slotId>` → removal under way. */
  readonly removals = new Map<string, SlotRemoval>();
  /** `<nodeId>/<slotId>` → when a node was first heard listing a slot nobody keeps. */
  readonly #unknownSince = new Map<string, number>();

  apply(event: VpsEvent): void {
    switch (event.type) {
      case 'PoolWarmSet':
        this.settings.set(event.data.poolId, { flavors: event.data.flavors, maxSlotAgeSeconds: event.data.maxSlotAgeSeconds });
        return;
      case 'WarmSlotPlaced': {
        const { siteId, slotId, poolId, flavorId, image, runtime, nodeId, resources, placedAt } = event.data;
        if (!this.slots.has(slotId)) {
          const count = `${poolId}\u0000${warmKey(flavorId, image)}`;
          this.placedCount.set(count, (this.placedCount.get(count) ?? 0) + 1);
        }
        this.slots.set(slotId, { siteId, slotId, poolId, flavorId, image, runtime, nodeId, resources, placedAt, readyAt: null });
        return;
      }
      case 'WarmSlotReady': {
        const slot = this.slots.get(event.data.slotId);
        if (slot) this.slots.set(slot.slotId, { ...slot, readyAt: event.data.readyAt });
        return;
      }
      case 'WarmSlotReaped': {
        const { siteId, nodeId, slotId, reason } = event.data;
        this.slots.delete(slotId);
        this.removals.set(`${nodeId}/${slotId}`, { siteId, nodeId, slotId, ...(reason === 'NODE_LOST' ? { nodeLost: true } : {}) });
        return;
      }
      case 'InstancePlaced': {
        const slotId = event.data.warmSlot?.slotId;
        if (slotId === undefined) return;
        this.slots.delete(slotId);
        this.taken.set(slotId, event.data.nodeId);
        return;
      }
      default:
        return;
    }
  }

  /** Slots ever placed for the pool's flavor and image: the ordinal of the next one. */
  placedFor(poolId: string, flavorId: string, image: string): number {
    return this.placedCount.get(`${poolId}\u0000${warmKey(flavorId, image)}`) ?? 0;
  }

  /**
   * A node's verified heartbeat: a taken slot or a removal it no longer lists is done with; a slot it lists that the
   * books do not keep, nor a create took, nor is being removed, is an orphan to remove (a slot reaped while this
   * process was down, a node that kept one through a reinstall of the control plane). Returns the new orphans.
   */
  heard(heard: HostInstancesHeard): SlotRemoval[] {
    const listed = new Set(heard.instances.map((r) => r.id));
    for (const [slotId, nodeId] of this.taken) if (nodeId === heard.nodeId && !listed.has(slotId)) this.taken.delete(slotId);
    for (const [key, removal] of this.removals)
      if (removal.nodeId === heard.nodeId && !listed.has(removal.slotId) && (removal.removeSentAt ?? Infinity) < heard.at) this.removals.delete(key);
    const orphans: SlotRemoval[] = [];
    for (const key of this.#unknownSince.keys())
      if (key.startsWith(`${heard.nodeId}/`) && !listed.has(key.slice(heard.nodeId.length + 1))) this.#unknownSince.delete(key);
    for (const report of heard.instances) {
      if (report.warm !== true) continue;
      const key = `${heard.nodeId}/${report.id}`;
      const kept = this.slots.get(report.id)?.nodeId === heard.nodeId || this.taken.get(report.id) === heard.nodeId;
      if (kept) this.#unknownSince.delete(key);
      if (kept || this.removals.has(key) || heard.siteId === undefined) continue;
      const since = this.#unknownSince.get(key) ?? heard.at;
      this.#unknownSince.set(key, since);
      if (heard.at - since < ORPHAN_GRACE_MS) continue;
      this.#unknownSince.delete(key);
      const orphan = { siteId: heard.siteId, nodeId: heard.nodeId, slotId: report.id };
      this.removals.set(key, orphan);
      orphans.push(orphan);
    }
    return orphans;
  }

  /** The pools with a setting or slots: the keeper's passes. */
  pools(): Set<string> {
    return new Set([...this.settings.keys(), ...[...this.slots.values()].map((s) => s.poolId)]);
  }
}
