import { Map as PersistentMap } from 'immutable';
import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import type { Resources } from '../../../schemas/vps/tenantCommands.ts';
import { tenantEvents, type TenantEvent } from '../../../schemas/vps/events.ts';
import { reservationOf, type InstanceReservation, type QuotaStatus, type QuotaUsage, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export const noResources: Resources = { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 };

const adding = (a: Resources, b: Resources, sign: 1 | -1): Resources => ({
  instances: a.instances + sign * b.instances,
  vcpus: a.vcpus + sign * b.vcpus,
  memoryMib: a.memoryMib + sign * b.memoryMib,
  diskGib: a.diskGib + sign * b.diskGib,
});

/** The usage after `resources` moved from one status to another (`released` holds nothing). */
function moved(usage: QuotaUsage, resources: Resources, from: QuotaStatus | undefined, to: QuotaStatus): QuotaUsage {
  let { used, reserved } = usage;
  if (from === 'used') used = adding(used, resources, -1);
  if (from === 'reserved') reserved = adding(reserved, resources, -1);
  if (to === 'used') used = adding(used, resources, 1);
  if (to === 'reserved') reserved = adding(reserved, resources, 1);
  return { used, reserved };
}

const withStatus = (state: TenantState, instanceId: string, status: QuotaStatus): TenantState => {
  const reservation = reservationOf(state, instanceId);
  if (!state.exists || !reservation) return state;
  return {
    ...state,
    instances: state.instances.set(instanceId, { ...reservation, status }),
    usage: moved(state.usage, reservation.resources, reservation.status, status),
  };
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
        return {
          exists: true,
          tenantId: event.data.tenantId,
          name: event.data.name,
          quota: noResources,
          instances: PersistentMap<string, InstanceReservation>(),
          usage: { used: noResources, reserved: noResources },
        };
      case 'TenantQuotaSet': {
        if (!state.exists) return state;
        const { instances, vcpus, memoryMib, diskGib } = event.data;
        return { ...state, quota: { instances, vcpus, memoryMib, diskGib } };
      }
      case 'TenantCapsSet':
        return state.exists ? { ...state, caps: { deploys: event.data.deploys, wipes: event.data.wipes } } : state;
      case 'InstanceRequested': {
        if (!state.exists) return state;
        const { instanceId, poolId, flavorId, image, sshKeys, userData, resources } = event.data;
        return {
          ...state,
          instances: state.instances.set(instanceId, { poolId, flavorId, image, sshKeys, userData, resources, status: 'reserved' }),
          usage: moved(state.usage, resources, reservationOf(state, instanceId)?.status, 'reserved'),
        };
      }
      case 'QuotaUsed':
        return withStatus(state, event.data.instanceId, 'used');
      case 'QuotaReleased':
        return withStatus(state, event.data.instanceId, 'released');
    }
  },
});

/** What the tenant's instances hold against its quota, per status (released ones hold nothing). */
export function usageOf(state: TenantState): QuotaUsage {
  return state.exists ? state.usage : { used: noResources, reserved: noResources };
}

/** The tenant's instance, unless it never requested it or its reservation was given back. */
export function liveInstanceOf(state: TenantState, instanceId: string): InstanceReservation | undefined {
  const reservation = reservationOf(state, instanceId);
  return reservation && reservation.status !== 'released' ? reservation : undefined;
}
