import { z } from 'zod';
import { DesiredInstanceState, ObservedInstanceState } from './instanceCommands.ts';
import { Resources } from './tenantCommands.ts';
import { InstancePlaced, PoolCreated } from './events.ts';
import { HostResources } from './placement.ts';
import { LabelSelector } from '../metal/nodeLabels.ts';

/** A tenant's quota: the limits, what running instances use, and what requested-but-not-yet-running ones reserve. */
export const QuotaView = z.object({ limit: Resources, used: Resources, reserved: Resources });
export type QuotaView = z.infer<typeof QuotaView>;

export const TenantView = z.object({ tenantId: z.string(), name: z.string(), quota: QuotaView, createdAt: z.string(), updatedAt: z.string() });
export type TenantView = z.infer<typeof TenantView>;

/** An instance as its tenant sees it: `pending → provisioning → running ⇄ stopped → deleting → deleted`, or `error`. */
export const InstanceState = z.enum(['pending', 'provisioning', 'running', 'stopped', 'deleting', 'deleted', 'error']);
export type InstanceState = z.infer<typeof InstanceState>;

/** Where a reservation stands: `reserved` until the instance first runs, then `used`, `released` once given back. */
export const QuotaStatus = z.enum(['reserved', 'used', 'released']);
export type QuotaStatus = z.infer<typeof QuotaStatus>;

/**
 * The state a user sees, from what was wanted and what was seen: a delete shows as `deleting` until the provider says
 * `deleted`; a released instance the provider never reported on is gone.
 */
export function instanceStateOf(desired: DesiredInstanceState, observed: ObservedInstanceState | null, quotaStatus: QuotaStatus): InstanceState {
  if (observed === 'deleted') return 'deleted';
  if (observed === 'error') return 'error';
  if (quotaStatus === 'released') return 'deleted';
  if (desired === 'deleted') return 'deleting';
  return observed ?? 'pending';
}

/**
 * Where a metal-pool instance runs, and why there: its `InstancePlaced` (the free capacity the node had, how many nodes
 * were considered, the holds it drew on), or its latest `InstanceRelocated` (`placedAt` its time, with the node it
 * left and why in `relocatedFrom`). Null until placed, and again once its host removed it (`InstanceUnplaced`).
 */
export const InstancePlacementView = InstancePlaced.schema
  .pick({
    siteId: true,
    nodeId: true,
    runtime: true,
    resources: true,
    freeBefore: true,
    fromHolds: true,
    considered: true,
    placedAt: true,
    warmSlot: true,
  })
  .extend({ relocatedFrom: z.object({ nodeId: z.string(), reason: z.string() }).optional() });
export type InstancePlacementView = z.infer<typeof InstancePlacementView>;

/** One instance. User data is not shown (it may hold anything); `hasUserData` says whether there is some. */
export const InstanceView = z.object({
  instanceId: z.string(),
  tenantId: z.string(),
  poolId: z.string(),
  flavorId: z.string(),
  image: z.string(),
  sshKeys: z.array(z.string()),
  hasUserData: z.boolean(),
  resources: Resources,
  quotaStatus: QuotaStatus,
  desired: DesiredInstanceState,
  observed: ObservedInstanceState.nullable(),
  state: InstanceState,
  providerInstanceId: z.string().nullable(),
  addresses: z.array(z.string()),
  /** The provider's words about the last observation (why `error`). */
  message: z.string().nullable(),
  /** A metal-pool instance's node (provider pools: always null). */
  placement: InstancePlacementView.nullable(),
  requestedAt: z.string(),
  updatedAt: z.string(),
});
export type InstanceView = z.infer<typeof InstanceView>;

/** A pool; `offeredTo` lists the tenants that may use it (a tenant sees only itself there). */
export const PoolView = PoolCreated.schema.extend({
  offeredTo: z.array(z.string()),
  /**
   * A metal pool's warm slots (`vps.setWarmPool`): per flavor and image, how many it keeps, how many are ready on
   * their nodes and how many are being prepared. Absent: it keeps none.
   */
  warm: z
    .object({
      flavors: z.array(z.object({ flavorId: z.string(), image: z.string(), count: z.number().int(), ready: z.number().int(), preparing: z.number().int() })),
      maxSlotAgeSeconds: z.number().int(),
    })
    .optional(),
  createdAt: z.string(),
});
export type PoolView = z.infer<typeof PoolView>;

/** A flavor and the provider offer it is sold as in each pool. */
export const FlavorView = z.object({
  flavorId: z.string(),
  vcpus: z.number().int(),
  memoryMib: z.number().int(),
  diskGib: z.number().int(),
  offers: z.array(z.object({ poolId: z.string(), offerId: z.string() })),
  createdAt: z.string(),
});
export type FlavorView = z.infer<typeof FlavorView>;

/** A provider account: the id of its token secret, never the token. */
export const AccountView = z.object({
  accountId: z.string(),
  providerId: z.string(),
  region: z.string(),
  config: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  tokenSecretId: z.string(),
  createdAt: z.string(),
});
export type AccountView = z.infer<typeof AccountView>;

/** A hold as `GET /v1/holds` shows it; `status` is decided at the time of the read (`holdStatusAt`). */
export const HoldView = z.object({
  holdId: z.string(),
  siteId: z.string(),
  holder: z.union([z.object({ tenantId: z.string() }), z.object({ poolId: z.string() })]),
  status: z.enum(['active', 'expired', 'released']),
  nodes: z.array(z.object({ nodeId: z.string(), resources: HostResources, freeBefore: HostResources })),
  wholeNodes: z.boolean(),
  selector: LabelSelector,
  placedAt: z.string(),
  expiresAt: z.string(),
  releasedAt: z.string().nullable(),
});
export type HoldView = z.infer<typeof HoldView>;
