import { z } from 'zod';
import { defineEvent } from '../eventCatalog.ts';
import { HostInstanceId } from '../agent/hostInstances.ts';
import { ResourceId } from '../ids.ts';
import { HoldCandidate } from './holdCommands.ts';
import { HostResources } from './placement.ts';

/** A day: a warm slot prepared longer ago than its pool's `maxSlotAgeSeconds` (this by default) is reaped and replaced. */
export const DEFAULT_WARM_SLOT_AGE_SECONDS = 86_400;

/** How many warm slots of one flavor and image a pool keeps ready. */
export const WarmFlavor = z.strictObject({
  flavorId: ResourceId,
  /** The image the slots are prepared with: a create takes a slot only when it asks for the same image. */
  image: z.string().min(1).max(512),
  count: z.number().int().min(0).max(32),
});
export type WarmFlavor = z.infer<typeof WarmFlavor>;

/**
 * `vps.setWarmPool` (operator): the warm slots a metal pool keeps, per flavor and image, replacing the pool's earlier
 * setting (an empty list: none; the slots it had are reaped). The pool must be a metal pool with a runtime, and each
 * flavor sold in it. At most 256 slots in all.
 */
export const SetWarmPool = z
  .strictObject({
    poolId: ResourceId,
    flavors: z.array(WarmFlavor).max(16),
    /** A slot prepared longer ago than this is reaped and replaced (an image that moved on, a disk gone stale). 60 s to 30 days. */
    maxSlotAgeSeconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(DEFAULT_WARM_SLOT_AGE_SECONDS),
  })
  .superRefine((setting, ctx) => {
    const keys = setting.flavors.map((f) => `${f.flavorId}\u0000${f.image}`);
    if (new Set(keys).size !== keys.length) ctx.addIssue({ code: 'custom', path: ['flavors'], message: 'each flavor and image once' });
    if (setting.flavors.reduce((n, f) => n + f.count, 0) > 256) ctx.addIssue({ code: 'custom', path: ['flavors'], message: 'at most 256 warm slots per pool' });
  });
export type SetWarmPool = z.infer<typeof SetWarmPool>;

/** What a pool keeps warm (`PoolWarmSet`), each flavor with what its slots take of a node. */
export const WarmSetting = z.object({
  flavors: z.array(z.object({ flavorId: z.string(), image: z.string(), count: z.number().int(), resources: HostResources })),
  maxSlotAgeSeconds: z.number().int(),
});
export type WarmSetting = z.infer<typeof WarmSetting>;

/** `vps.placeWarmSlot` (engine: the reconciler's keeper): places one slot of the pool's setting on a node of its site. */
export const PlaceWarmSlot = z.strictObject({
  siteId: ResourceId,
  poolId: ResourceId,
  slotId: HostInstanceId,
  flavorId: ResourceId,
  image: z.string().min(1).max(512),
  candidates: z.array(HoldCandidate).max(10_000),
});
export type PlaceWarmSlot = z.infer<typeof PlaceWarmSlot>;

/** `vps.markWarmSlotReady` (engine): the slot's node reported it prepared (`stopped`) in a verified heartbeat. */
export const MarkWarmSlotReady = z.strictObject({ siteId: ResourceId, slotId: HostInstanceId });
export type MarkWarmSlotReady = z.infer<typeof MarkWarmSlotReady>;

/** Why a slot was reaped: more than the pool keeps, older than its limit, failed on its node, or its node lost. */
export const WarmSlotReapReason = z.enum(['SURPLUS', 'EXPIRED', 'FAILED', 'NODE_LOST']);
export type WarmSlotReapReason = z.infer<typeof WarmSlotReapReason>;

/** `vps.reapWarmSlot` (engine): the slot is no longer wanted; its capacity is freed and its node asked to remove it. */
export const ReapWarmSlot = z.strictObject({ siteId: ResourceId, slotId: HostInstanceId, reason: WarmSlotReapReason });
export type ReapWarmSlot = z.infer<typeof ReapWarmSlot>;

/** The pool keeps these warm slots from now on (`bc.evt.vps.pool.<poolId>`). */
export const PoolWarmSet = defineEvent('PoolWarmSet', z.object({ poolId: z.string(), ...WarmSetting.shape, setAt: z.string() }));

/**
 * A warm slot was placed (`bc.evt.vps.holdBook.<siteId>`): capacity on `nodeId` kept for the pool's next create of
 * this flavor and image, counted as taken for every other placement and hold. Why this node is told as for
 * `InstancePlaced`; the runtime is the pool's, and only nodes labelled `bc.dev/warm-start.<runtime>` qualify.
 */
export const WarmSlotPlaced = defineEvent(
  'WarmSlotPlaced',
  z.object({
    siteId: z.string(),
    slotId: z.string(),
    poolId: z.string(),
    flavorId: z.string(),
    image: z.string(),
    runtime: z.string(),
    nodeId: z.string(),
    resources: HostResources,
    freeBefore: HostResources,
    considered: z.number().int(),
    placedAt: z.string(),
  }),
);
/** The slot's node reported it prepared and stopped: a create of its pool, flavor and image may take it. */
export const WarmSlotReady = defineEvent('WarmSlotReady', z.object({ siteId: z.string(), slotId: z.string(), nodeId: z.string(), readyAt: z.string() }));
/** The slot is gone from the book (`reason`), its capacity free; the reconciler has its node remove it. */
export const WarmSlotReaped = defineEvent(
  'WarmSlotReaped',
  z.object({ siteId: z.string(), slotId: z.string(), poolId: z.string(), nodeId: z.string(), reason: WarmSlotReapReason, reapedAt: z.string() }),
);

/** The slot a placement took, when it took one (`InstancePlaced.warmSlot`): a create placed warm, not cold. */
export const TakenWarmSlot = z.object({ slotId: z.string(), placedAt: z.string(), readyAt: z.string() });
export type TakenWarmSlot = z.infer<typeof TakenWarmSlot>;

/** A warm slot on the site's book until a create takes it or it is reaped. */
export interface WarmSlot {
  readonly slotId: string;
  readonly poolId: string;
  readonly flavorId: string;
  readonly image: string;
  readonly runtime: string;
  readonly nodeId: string;
  readonly resources: HostResources;
  readonly placedAt: string;
  readonly readyAt: string | null;
}
