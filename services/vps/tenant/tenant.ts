import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { Resources } from '../../../schemas/vps/tenantCommands.ts';
import { tenantEvents, type TenantEvent } from '../../../schemas/vps/events.ts';
import { reservationOf, type InstanceReservation, type QuotaStatus, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export const noResources: Resources = { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 };

const withStatus = (state: TenantState, instanceId: string, status: QuotaStatus): TenantState => {
  const reservation = reservationOf(state, instanceId);
  if (!state.exists) return state;
  return reservation ? { ...state, instances: { ...state.instances, [instanceId]: { ...reservation, status } } } : state;
};

/**
 * A VPS tenant (`bc.evt.vps.tenant.<tenantId>`): its quota and every instance it requested. Quota is decided here,
 * so optimistic concurrency on this one subject makes oversubscription impossible.
 */
export const tenantAggregate = defineAggregate<TenantState, TenantEvent>({
  module: 'vps',
  type: 'tenant',
  initialState: { exists: false },
  catalog: new EventCatalog(tenantEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'TenantCreated':
        return { exists: true, tenantId: event.data.tenantId, name: event.data.name, quota: noResources, instances: {} };
      case 'TenantQuotaSet': {
        if (!state.exists) return state;
        const { instances, vcpus, memoryMib, diskGib } = event.data;
        return { ...state, quota: { instances, vcpus, memoryMib, diskGib } };
      }
      case 'InstanceRequested': {
        if (!state.exists) return state;
        const { instanceId, poolId, flavorId, image, sshKeys, userData, resources } = event.data;
        return { ...state, instances: { ...state.instances, [instanceId]: { poolId, flavorId, image, sshKeys, userData, resources, status: 'reserved' } } };
      }
      case 'QuotaUsed':
        return withStatus(state, event.data.instanceId, 'used');
      case 'QuotaReleased':
        return withStatus(state, event.data.instanceId, 'released');
    }
  },
});

/** What the tenant's instances hold against its quota, per status (released ones hold nothing). */
export function usageOf(state: TenantState): { used: Resources; reserved: Resources } {
  const used = { ...noResources };
  const reserved = { ...noResources };
  if (!state.exists) return { used, reserved };
  for (const r of Object.values(state.instances)) {
    if (r.status === 'released') continue;
    const into = r.status === 'used' ? used : reserved;
    into.instances += r.resources.instances;
    into.vcpus += r.resources.vcpus;
    into.memoryMib += r.resources.memoryMib;
    into.diskGib += r.resources.diskGib;
  }
  return { used, reserved };
}

/** The tenant's instance, unless it never requested it or its reservation was given back. */
export function liveInstanceOf(state: TenantState, instanceId: string): InstanceReservation | undefined {
  const reservation = reservationOf(state, instanceId);
  return reservation && reservation.status !== 'released' ? reservation : undefined;
}
