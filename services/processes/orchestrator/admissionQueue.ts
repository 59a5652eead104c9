import type { CappedSlot } from '../../../schemas/metal/workflow.ts';

/** What admission needs of a waiting operation: its workflow, its site slot (none: uncapped) and its tenant (none: the operator's). */
export interface Queued<T> {
  readonly workflowId: string;
  readonly siteId: string;
  readonly slot: CappedSlot | null;
  readonly tenantId: string | null;
  readonly op: T;
}

/** Waiting operations of one site slot and one tenant (or none), oldest first: all of them are held by the same two counters. */
interface Group<T> {
  readonly siteId: string;
  readonly slot: CappedSlot;
  readonly tenantId: string | null;
  /** Arrival number per workflow; a `Map` keeps insertion order, so its first entry is the oldest still waiting. */
  readonly ops: Map<string, { readonly seq: number; readonly op: T }>;
}

/** How many more may start now: free slots of a site's slot kind, and of a tenant's (no tenant: unlimited). */
export interface FreeSlots {
  site(siteId: string, slot: CappedSlot): number;
  tenant(tenantId: string, slot: CappedSlot): number;
}

/**
 * Operations waiting for a start, grouped by the two caps that hold them (`<siteId>/<slot>` and the tenant's slot).
 * Admission looks at each group's oldest operation only and merges the groups by arrival, so its cost is the number
 * of groups waiting plus the starts it finds, never a walk of the queue: at 10,000 machines most of them wait behind
 * full slots. A group whose site or tenant is full is dropped from the merge, so a tenant at its cap holds only its
 * own operations, never another tenant's behind it at the same site.
 */
export class AdmissionQueue<T> {
  readonly #all = new Map<string, { readonly seq: number; readonly queued: Queued<T> }>();
  readonly #groups = new Map<string, Group<T>>();
  /** Uncapped operations (inspections, rescues, remediations) start at once: they wait for nothing. */
  readonly #uncapped = new Map<string, { readonly seq: number; readonly op: T }>();
  #seq = 0;

  has(workflowId: string): boolean {
    return this.#all.has(workflowId);
  }

  get size(): number {
    return this.#all.size;
  }

  /** Every waiting operation, oldest first. */
  *values(): IterableIterator<Queued<T>> {
    for (const { queued } of this.#all.values()) yield queued;
  }

  get(workflowId: string): Queued<T> | undefined {
    return this.#all.get(workflowId)?.queued;
  }

  add(queued: Queued<T>): void {
    if (this.#all.has(queued.workflowId)) return;
    const seq = this.#seq++;
    this.#all.set(queued.workflowId, { seq, queued });
    const entry = { seq, op: queued.op };
    if (!queued.slot) {
      this.#uncapped.set(queued.workflowId, entry);
      return;
    }
    const key = groupKey(queued.siteId, queued.slot, queued.tenantId);
    let group = this.#groups.get(key);
    if (!group) {
      group = { siteId: queued.siteId, slot: queued.slot, tenantId: queued.tenantId, ops: new Map() };
      this.#groups.set(key, group);
    }
    group.ops.set(queued.workflowId, entry);
  }

  /** Takes the operation out (started, cancelled, failed); what it was, if it waited. */
  remove(workflowId: string): Queued<T> | undefined {
    const found = this.#all.get(workflowId);
    if (!found) return undefined;
    this.#all.delete(workflowId);
    const { queued } = found;
    if (!queued.slot) {
      this.#uncapped.delete(workflowId);
      return queued;
    }
    const key = groupKey(queued.siteId, queued.slot, queued.tenantId);
    const group = this.#groups.get(key)!;
    group.ops.delete(workflowId);
    if (group.ops.size === 0) this.#groups.delete(key);
    return queued;
  }

  /**
   * What may start now within `free`, in arrival order: the same answer as walking the queue oldest first and taking
   * each operation whose site slot and tenant slot both still have room, until `fleetFree` (workflows that may still
   * start across the fleet, every operation) are taken. Changes nothing.
   */
  admissible(free: FreeSlots, fleetFree = Number.POSITIVE_INFINITY): T[] {
    if (fleetFree <= 0) return [];
    const siteFree = new Map<string, number>();
    const tenantFree = new Map<string, number>();
    const room = (g: Group<T>): boolean => {
      const s = `${g.siteId}/${g.slot}`;
      if (!siteFree.has(s)) siteFree.set(s, free.site(g.siteId, g.slot));
      if (siteFree.get(s)! <= 0) return false;
      if (g.tenantId === null) return true;
      const t = `${g.tenantId}/${g.slot}`;
      if (!tenantFree.has(t)) tenantFree.set(t, free.tenant(g.tenantId, g.slot));
      return tenantFree.get(t)! > 0;
    };
    const heads: Head<T>[] = [];
    const uncapped = this.#uncapped.values();
    const first = uncapped.next();
    if (!first.done) heads.push({ group: null, rest: uncapped, seq: first.value.seq, op: first.value.op });
    for (const group of this.#groups.values()) {
      if (!room(group)) continue;
      const rest = group.ops.values();
      const head = rest.next();
      if (!head.done) heads.push({ group, rest, seq: head.value.seq, op: head.value.op });
    }
    const heap = new HeadHeap(heads);
    const admissible: T[] = [];
    for (let head = heap.pop(); head; head = heap.pop()) {
      // Another group of the same site or tenant may have taken the last slot since this one joined the merge.
      if (head.group && !room(head.group)) continue;
      admissible.push(head.op);
      if (admissible.length >= fleetFree) break;
      if (head.group) {
        const s = `${head.group.siteId}/${head.group.slot}`;
        siteFree.set(s, siteFree.get(s)! - 1);
        if (head.group.tenantId !== null) {
          const t = `${head.group.tenantId}/${head.group.slot}`;
          tenantFree.set(t, tenantFree.get(t)! - 1);
        }
        if (!room(head.group)) continue;
      }
      const next = head.rest.next();
      if (!next.done) heap.push({ ...head, seq: next.value.seq, op: next.value.op });
    }
    return admissible;
  }
}

const groupKey = (siteId: string, slot: CappedSlot, tenantId: string | null) => JSON.stringify([siteId, slot, tenantId]);

/** A group's oldest operation not yet merged, and the rest of the group after it. */
interface Head<T> {
  readonly group: Group<T> | null;
  readonly rest: Iterator<{ readonly seq: number; readonly op: T }>;
  readonly seq: number;
  readonly op: T;
}

/** A binary min-heap of group heads by arrival. */
class HeadHeap<T> {
  readonly #items: Head<T>[];

  constructor(items: Head<T>[]) {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#down(i);
  }

  push(item: Head<T>): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.seq <= items[i]!.seq) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): Head<T> | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      this.#down(0);
    }
    return top;
  }

  #down(i: number): void {
    const items = this.#items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < items.length && items[l]!.seq < items[least]!.seq) least = l;
      if (r < items.length && items[r]!.seq < items[least]!.seq) least = r;
      if (least === i) return;
      [items[least], items[i]] = [items[i]!, items[least]!];
      i = least;
    }
  }
}
