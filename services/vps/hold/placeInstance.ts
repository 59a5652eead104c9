import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import type { Exclusion, HostResources, PlacementRequest } from '../../../schemas/vps/placement.ts';
import { PlaceInstance } from '../../../schemas/vps/placementCommands.ts';
import { poolRef, type PoolState } from '../../../schemas/vps/poolState.ts';
import { reservationOf, tenantRef, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { holdBookAggregate } from './holdBook.ts';
import { bookSnapshotAt } from '../placement/bookSnapshot.ts';
import { place, type PlacementSnapshot } from '../placement/placement.ts';
import { takeWarmSlot } from './takeWarmSlot.ts';

export const reasonOf = (e: Exclusion): string => (e.why === 'INSUFFICIENT_CAPACITY' ? `INSUFFICIENT_CAPACITY (short of ${e.short.join(', ')})` : e.why);

/** The pool's runtime, once the pool is a metal pool of this site that runs instances; refuses anything else. */
export function runtimeOf(pool: PoolState, poolId: string, siteId: string): string {
  if (!pool.exists || pool.class !== 'metal' || pool.siteId !== siteId)
    throw new DomainError('PRECONDITION_FAILED', `pool ${poolId} is not a metal pool at site ${siteId}`);
  if (pool.runtime === undefined) throw new DomainError('PRECONDITION_FAILED', `metal pool ${poolId} names no runtime: it runs no instances`);
  return pool.runtime;
}

/** NO_CAPACITY: no node of the site takes the instance, each node named with why. */
export function noNodeFits(siteId: string, instanceId: string, runtime: string, resources: HostResources, excluded: readonly Exclusion[]): DomainError {
  const issues = excluded.map((e) => ({ path: e.nodeId, message: reasonOf(e) }));
  const detail = issues.length ? issues.map((i) => `${i.path}: ${i.message}`).join('; ') : 'the site has no node';
  const size = `${runtime}, ${resources.vcpus} vCPU, ${resources.memoryMib} MiB, ${resources.diskGib} GiB`;
  return new DomainError('NO_CAPACITY', `no node of site ${siteId} takes instance ${instanceId} (${size}): ${detail}`, { issues });
}

/**
 * The node `request` goes to on the book's `snapshot` (`place`), as `InstancePlaced` and `InstanceRelocated` record it:
 * which node, with the free capacity it had, the holds drawn on and how many nodes were considered. NO_CAPACITY when
 * none fits.
 */
export function choosePlacement(siteId: string, request: PlacementRequest, snapshot: PlacementSnapshot) {
  const { instanceId, tenantId, poolId, runtime, resources } = request;
  const decision = place(request, snapshot);
  if (!decision.placed) throw noNodeFits(siteId, instanceId, runtime, resources, decision.excluded);
  const fromHolds = decision.fromHolds.map((d) => ({ holdId: d.holdId, resources: d.resources }));
  return {
    siteId,
    instanceId,
    tenantId,
    poolId,
    runtime,
    nodeId: decision.nodeId,
    resources,
    freeBefore: decision.freeBefore,
    fromHolds,
    considered: decision.considered,
  };
}

/**
 * `vps.placeInstance` (engine): decides which node of the site a metal-pool instance runs on, by the pure placement
 * core (`place`) on one snapshot: the candidates the reconciler read (labels, capacity, schedulable), what the book's
 * instances take of each node and the holds active at the command's time (its tenant's and its pool's own are
 * capacity it may draw on). The same snapshot gives the same node. One subject per site: two placements decided at
 * once append against the same sequence and the loser re-decides seeing the winner, so no node is ever overcommitted.
 * What it takes is the tenant's reservation (`InstanceRequested`); the runtime, the pool's. A ready warm slot of its
 * pool, flavor and image is taken first (`takeWarmSlot`): the instance goes where the slot is, on its capacity, and
 * the event names the slot. Placed already: a no-op. Nothing fits: NO_CAPACITY, each node named with why.
 */
export const placeInstance = defineCommand({
  name: 'vps.placeInstance',
  exposure: ['engine'],
  schema: PlaceInstance,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  dependencies: async (command, load) => {
    const tenant: TenantState = await load(tenantRef, command.tenantId);
    const reservation = reservationOf(tenant, command.instanceId);
    return { reservation, pool: reservation ? await load(poolRef, reservation.poolId) : undefined };
  },
  decide(command, state, { dependencies, now }): HoldBookEvent[] {
    const { siteId, tenantId, instanceId } = command;
    const placed = state.instances?.[instanceId];
    if (placed) {
      if (placed.tenantId !== tenantId) throw new DomainError('ALREADY_EXISTS', `instance id ${instanceId} is placed for another tenant`);
      return [];
    }
    const { reservation, pool } = dependencies;
    if (!reservation || reservation.status === 'released')
      throw new DomainError('PRECONDITION_FAILED', `tenant ${tenantId} holds no reservation for instance ${instanceId}`);
    const runtime = runtimeOf(pool ?? { exists: false }, reservation.poolId, siteId);
    const { vcpus, memoryMib, diskGib } = reservation.resources;
    const resources: HostResources = { vcpus, memoryMib, diskGib };
    const nowMs = Date.parse(now);
    const warm = takeWarmSlot(state, reservation, runtime, command.candidates);
    if (warm) {
      const { slot, nodeId, freeBefore, fromHolds, considered } = warm;
      const warmSlot = { slotId: slot.slotId, placedAt: slot.placedAt, readyAt: slot.readyAt! };
      const data = { siteId, instanceId, tenantId, poolId: reservation.poolId, runtime, nodeId, resources, freeBefore, fromHolds, considered };
      return [{ type: 'InstancePlaced', data: { ...data, placedAt: now, warmSlot } }];
    }
    const request = { instanceId, tenantId, poolId: reservation.poolId, runtime, resources, selector: {} };
    const chosen = choosePlacement(siteId, request, bookSnapshotAt(state, command.candidates, nowMs));
    return [{ type: 'InstancePlaced', data: { ...chosen, placedAt: now } }];
  },
});
