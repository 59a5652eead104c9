import type { Map as PersistentMap } from 'immutable';
import { aggregateRef } from '../aggregateRef.ts';
import type { Resources } from './tenantCommands.ts';

/** Where an instance's reservation stands: requested and not yet running, counted as used, or given back. */
export type QuotaStatus = 'reserved' | 'used' | 'released';

/** One instance as the tenant holds it: what was requested and exactly what it reserved. */
export interface InstanceReservation {
  readonly poolId: string;
  readonly flavorId: string;
  readonly image: string;
  readonly sshKeys: readonly string[];
  readonly userData: string | null;
  readonly resources: Resources;
  readonly status: QuotaStatus;
}

/** Resources held against a tenant's quota: by instances running (`used`) and by those requested, not yet running. */
export interface QuotaUsage {
  readonly used: Resources;
  readonly reserved: Resources;
}

/**
 * Released instances stay in `instances`, so a repeated create or release of the same id is recognised (and an id
 * is never reused by its tenant). `instances` is a persistent map (`immutable`): folding an event shares all but the
 * changed path with the state before, so a tenant's n-th event costs O(log n), not a copy of its n instances, and
 * every earlier state (the aggregate cache's, an OCC retry's base) stays valid. No state of this aggregate is
 * serialised (it declares no `stateVersion`); read it through `reservationOf` / `reservationsOf`.
 */
export type TenantState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly tenantId: string;
      readonly name: string;
      readonly quota: Resources;
      readonly instances: PersistentMap<string, InstanceReservation>;
      /** What the instances hold against the quota, per status (released ones hold nothing), kept as they change. */
      readonly usage: QuotaUsage;
      /** Its own caps on concurrent deploys and wipes of its nodes (`vps.setTenantCaps`); absent or `null`: the default per tenant. */
      readonly caps?: { readonly deploys: number | null; readonly wipes: number | null };
    };

/** The tenant's reservation for `instanceId` (a map, not an object: an id such as `constructor` is a valid instance id). */
export function reservationOf(state: TenantState, instanceId: string): InstanceReservation | undefined {
  return state.exists ? state.instances.get(instanceId) : undefined;
}

/** Every reservation the tenant holds, released ones included. */
export function reservationsOf(state: TenantState): Iterable<InstanceReservation> {
  return state.exists ? state.instances.values() : [];
}

/** What another aggregate may read of a tenant (`bc.evt.vps.tenant.<tenantId>`). */
export const tenantRef = aggregateRef<TenantState>('vps', 'tenant');
