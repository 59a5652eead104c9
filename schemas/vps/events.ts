import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { WipeMethod } from '../agent/diskWipe.ts';
import { DesiredInstanceState, ObservedInstanceState } from './instanceCommands.ts';
import { RemediableInstanceState } from './instanceRemediation.ts';
import { PoolAgent, PoolClass } from './poolCommands.ts';
import { Resources } from './tenantCommands.ts';
import { LabelSelector } from '../metal/nodeLabels.ts';
import { HoldHolder } from './holdCommands.ts';
import { HostResources } from './placement.ts';
import { PoolWarmSet, TakenWarmSlot, WarmSlotPlaced, WarmSlotReady, WarmSlotReaped } from './warmPool.ts';

/** A VPS tenant (`bc.evt.vps.tenant.<tenantId>`); its quota starts at zero. */
export const TenantCreated = defineEvent('TenantCreated', z.object({ tenantId: z.string(), name: z.string() }));

/** The tenant's quota limits, replacing the previous ones. */
export const TenantQuotaSet = defineEvent('TenantQuotaSet', Resources.extend({ tenantId: z.string() }));

/**
 * An instance was accepted on the tenant (`bc.evt.vps.tenant.<tenantId>`): this event is the quota reservation of
 * `resources`, held until `QuotaReleased`. Its desired state starts as `running`. The reconciler creates the instance
 * from it.
 */
export const InstanceRequested = defineEvent(
  'InstanceRequested',
  z.object({
    tenantId: z.string(),
    instanceId: z.string(),
    poolId: z.string(),
    flavorId: z.string(),
    image: z.string(),
    sshKeys: z.array(z.string()),
    userData: z.string().nullable(),
    resources: Resources,
    requestedAt: z.string(),
  }),
);

/**
 * The instance ran at least once: its reservation counts as used (views only; the limit counts both alike). No
 * longer appended (the `vps` read model takes "used" from the instance's first `running` observation, which saves the
 * tenant's subject a write per instance); kept so logs that hold it still read.
 */
export const QuotaUsed = defineEvent('QuotaUsed', z.object({ tenantId: z.string(), instanceId: z.string() }));

/** The instance's reservation is given back, exactly the `resources` its `InstanceRequested` reserved. */
export const QuotaReleased = defineEvent('QuotaReleased', z.object({ tenantId: z.string(), instanceId: z.string() }));

/**
 * The tenant's own caps on concurrent deploys and wipes of its nodes (across all sites), replacing the previous ones;
 * `null`: the orchestrator's default per tenant (BC_MAX_DEPLOYS_PER_TENANT / BC_MAX_WIPES_PER_TENANT).
 */
export const TenantCapsSet = defineEvent(
  'TenantCapsSet',
  z.object({ tenantId: z.string(), deploys: z.number().int().positive().nullable(), wipes: z.number().int().positive().nullable() }),
);

export const tenantEvents = [TenantCreated, TenantQuotaSet, InstanceRequested, QuotaUsed, QuotaReleased, TenantCapsSet] as const;
export type TenantEvent = EventOf<(typeof tenantEvents)[number]>;

/** A pool (`bc.evt.vps.pool.<poolId>`): `accountId` is set for provider pools, `siteId` for metal pools. */
export const PoolCreated = defineEvent(
  'PoolCreated',
  z.object({
    poolId: z.string(),
    class: PoolClass,
    agent: PoolAgent,
    accountId: z.string().nullable(),
    siteId: z.string().nullable(),
    /** `wipeMethod` is absent on pools created before it existed, and when not given (`zero`). */
    policy: z.object({
      allowUnverifiedRelease: z.boolean(),
      provisioningCidrs: z.array(z.string()),
      wipeMethod: WipeMethod.optional(),
      hardwareProfile: z.string().optional(),
    }),
    /** The bcx runtime a metal pool's instances run on (`bc.dev/driver.<runtime>`); absent: the pool runs no instances on metal. */
    runtime: z.string().optional(),
  }),
);
/** The tenant may create instances in the pool. */
export const PoolOffered = defineEvent('PoolOffered', z.object({ poolId: z.string(), tenantId: z.string() }));
/** The tenant may no longer create instances in the pool; the ones it has stay. */
export const PoolWithdrawn = defineEvent('PoolWithdrawn', z.object({ poolId: z.string(), tenantId: z.string() }));

export const poolEvents = [PoolCreated, PoolOffered, PoolWithdrawn, PoolWarmSet] as const;
export type PoolEvent = EventOf<(typeof poolEvents)[number]>;

/** A flavor (`bc.evt.vps.flavor.<flavorId>`): an instance size. */
export const FlavorCreated = defineEvent(
  'FlavorCreated',
  z.object({ flavorId: z.string(), vcpus: z.number().int(), memoryMib: z.number().int(), diskGib: z.number().int() }),
);
/** The flavor is sold in `poolId` as the provider's `offerId` (replacing an earlier mapping in that pool). */
export const FlavorMapped = defineEvent('FlavorMapped', z.object({ flavorId: z.string(), poolId: z.string(), offerId: z.string() }));

export const flavorEvents = [FlavorCreated, FlavorMapped] as const;
export type FlavorEvent = EventOf<(typeof flavorEvents)[number]>;

/**
 * A provider account (`bc.evt.vps.account.<accountId>`). Only the token secret's id is here: the token itself stays
 * sealed in the secrets module.
 */
export const ProviderAccountCreated = defineEvent(
  'ProviderAccountCreated',
  z.object({
    accountId: z.string(),
    providerId: z.string(),
    region: z.string(),
    config: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    tokenSecretId: z.string(),
  }),
);

export const accountEvents = [ProviderAccountCreated] as const;
export type AccountEvent = EventOf<(typeof accountEvents)[number]>;

/** What the tenant wants the instance to be (`bc.evt.vps.instance.<instanceId>`). */
export const InstanceDesiredStateSet = defineEvent(
  'InstanceDesiredStateSet',
  z.object({ instanceId: z.string(), tenantId: z.string(), desired: DesiredInstanceState }),
);

/** What the reconciler saw at the provider (`bc.evt.vps.instance.<instanceId>`); `message` is the provider's words. */
export const InstanceObserved = defineEvent(
  'InstanceObserved',
  z.object({
    instanceId: z.string(),
    tenantId: z.string(),
    observed: ObservedInstanceState,
    providerInstanceId: z.string().nullable(),
    addresses: z.array(z.string()),
    message: z.string().nullable(),
  }),
);

/**
 * A remediation of the instance was accepted (`vps.remediateInstance`): `workflowId` runs `profile` against it, and
 * `returnTo` is the state it was in, where it goes back afterwards. Until it ends the reconciler leaves the instance be.
 */
export const InstanceRemediationRequested = defineEvent(
  'InstanceRemediationRequested',
  z.object({
    instanceId: z.string(),
    tenantId: z.string(),
    poolId: z.string(),
    workflowId: z.string(),
    profile: z.string(),
    returnTo: RemediableInstanceState,
    inputs: z.record(z.string(), z.unknown()),
  }),
);
/** The remediation's workflow completed: the instance is back in `returnTo` (its desired state again). */
export const InstanceRemediationCompleted = defineEvent(
  'InstanceRemediationCompleted',
  z.object({ instanceId: z.string(), tenantId: z.string(), workflowId: z.string(), returnTo: RemediableInstanceState }),
);
/** The remediation failed (or could not start): the instance needs attention, and the reconciler leaves it be until someone acts. */
export const InstanceRemediationFailed = defineEvent(
  'InstanceRemediationFailed',
  z.object({ instanceId: z.string(), tenantId: z.string(), workflowId: z.string(), reason: z.string(), failedStep: z.string().nullable() }),
);

export const instanceEvents = [
  InstanceDesiredStateSet,
  InstanceObserved,
  InstanceRemediationRequested,
  InstanceRemediationCompleted,
  InstanceRemediationFailed,
] as const;
export type InstanceEvent = EventOf<(typeof instanceEvents)[number]>;

/**
 * A hold was placed at the site (`bc.evt.vps.holdBook.<siteId>`): the decision, with why each node: the free capacity
 * it had when chosen (best fit: the least left over) and how many nodes were considered. Counts until `expiresAt`.
 */
export const HoldPlaced = defineEvent(
  'HoldPlaced',
  z.object({
    siteId: z.string(),
    holdId: z.string(),
    holder: HoldHolder,
    nodes: z.array(z.object({ nodeId: z.string(), resources: HostResources, freeBefore: HostResources })),
    wholeNodes: z.boolean(),
    selector: LabelSelector,
    durationSeconds: z.number().int(),
    considered: z.number().int(),
    placedAt: z.string(),
    expiresAt: z.string(),
  }),
);
/** The hold's capacity was given back before it expired. */
export const HoldReleased = defineEvent('HoldReleased', z.object({ siteId: z.string(), holdId: z.string(), holder: HoldHolder, releasedAt: z.string() }));

/** What a placement decided and why: shared by a first placement and a relocation. */
const placementChoice = {
  siteId: z.string(),
  instanceId: z.string(),
  tenantId: z.string(),
  poolId: z.string(),
  runtime: z.string(),
  nodeId: z.string(),
  resources: HostResources,
  freeBefore: HostResources,
  fromHolds: z.array(z.object({ holdId: z.string(), resources: HostResources })),
  considered: z.number().int(),
};

/**
 * An instance of a metal pool was placed at the site (`bc.evt.vps.holdBook.<siteId>`: the same book as holds, so
 * placements and holds decided at once serialise on one subject): which node, and why (the free capacity it had, how
 * many nodes were considered, the holds of its tenant or pool it drew on). It takes `resources` there until unplaced.
 */
export const InstancePlaced = defineEvent(
  'InstancePlaced',
  z.object({
    ...placementChoice,
    placedAt: z.string(),
    /** Placed warm: the ready slot of its pool, flavor and image it took (why this node: the slot was there). Absent: cold. */
    warmSlot: TakenWarmSlot.optional(),
  }),
);
/** The instance is gone from its node (its host removed it): the capacity it took is free again. */
export const InstanceUnplaced = defineEvent(
  'InstanceUnplaced',
  z.object({ siteId: z.string(), instanceId: z.string(), tenantId: z.string(), nodeId: z.string(), unplacedAt: z.string() }),
);

/**
 * The instance's node is lost (its host silent past the liveness window, or no longer deployed): it is to be placed
 * again on another node of the site. Recorded on the site's book by the autonomy engine's `relocate` lane; the
 * reconciler carries it out (`InstanceRelocated`).
 */
export const InstanceRelocationRequested = defineEvent(
  'InstanceRelocationRequested',
  z.object({ siteId: z.string(), instanceId: z.string(), tenantId: z.string(), fromNodeId: z.string(), reason: z.string(), requestedAt: z.string() }),
);
/**
 * The instance was placed again, on `nodeId`, away from `fromNodeId` (why: `reason`, as requested): it takes
 * `resources` there from now on and nothing on `fromNodeId`, whose copy its host is asked to remove if it comes back.
 * Why this node is told as for `InstancePlaced`.
 */
export const InstanceRelocated = defineEvent(
  'InstanceRelocated',
  z.object({ ...placementChoice, fromNodeId: z.string(), reason: z.string(), relocatedAt: z.string() }),
);

export const holdBookEvents = [
  HoldPlaced,
  HoldReleased,
  InstancePlaced,
  InstanceUnplaced,
  InstanceRelocationRequested,
  InstanceRelocated,
  WarmSlotPlaced,
  WarmSlotReady,
  WarmSlotReaped,
] as const;
export type HoldBookEvent = EventOf<(typeof holdBookEvents)[number]>;

/** Every event of the `vps` module. */
export const vpsEvents = [...tenantEvents, ...poolEvents, ...flavorEvents, ...accountEvents, ...instanceEvents, ...holdBookEvents] as const;
export type VpsEvent = EventOf<(typeof vpsEvents)[number]>;
