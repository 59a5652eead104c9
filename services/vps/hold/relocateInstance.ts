import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { RelocateInstance } from '../../../schemas/vps/placementCommands.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { reservationOf, tenantRef } from '../../../schemas/vps/tenantState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { holdBookAggregate } from './holdBook.ts';
import { choosePlacement, runtimeOf } from './placeInstance.ts';
import { bookSnapshotAt } from '../placement/bookSnapshot.ts';

/**
 * `vps.relocateInstance` (engine: the VPS reconciler, with the site's nodes now): places an instance whose relocation
 * was requested again, by the same rules and on the same book as `vps.placeInstance` (runtime driver label, capacity,
 * holds; best fit), never on the node it leaves, which is taken as not schedulable whatever the sender saw. What it
 * took there is freed in the same event (`InstanceRelocated`), so the move is one decision against the book's
 * sequence: two relocations, or a relocation and a create, decided at once cannot overcommit a node. What it takes
 * is what it took (its reservation, unchanged: quota is not touched). Nothing requested (or moved already): a no-op;
 * no node fits: NO_CAPACITY, and the request stands for the next try.
 */
export const relocateInstance = defineCommand({
  name: 'vps.relocateInstance',
  exposure: ['engine'],
  schema: RelocateInstance,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  // The instance's pool is its reservation's (the book's record of it carries the same id).
  dependencies: async (command, load) => {
    const reservation = reservationOf(await load(tenantRef, command.tenantId), command.instanceId);
    return { pool: reservation ? await load(poolRef, reservation.poolId) : undefined };
  },
  decide(command, state, { dependencies, now }): HoldBookEvent[] {
    const { siteId, tenantId, instanceId } = command;
    const placed = state.instances?.[instanceId];
    if (placed && placed.tenantId !== tenantId) throw new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
    if (!placed?.relocation) return [];
    const { fromNodeId, reason } = placed.relocation;
    const runtime = runtimeOf(dependencies.pool ?? { exists: false }, placed.poolId, siteId);
    const { [instanceId]: _leaving, ...others } = state.instances ?? {};
    const candidates = command.candidates.map((c) => (c.nodeId === fromNodeId ? { ...c, schedulable: false } : c));
    const request = { instanceId, tenantId, poolId: placed.poolId, runtime, resources: placed.resources, selector: {} };
    const chosen = choosePlacement(siteId, request, bookSnapshotAt({ ...state, instances: others }, candidates, Date.parse(now)));
    return [{ type: 'InstanceRelocated', data: { ...chosen, fromNodeId, reason, relocatedAt: now } }];
  },
});
