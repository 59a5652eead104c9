import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { HoldCandidate } from './holdCommands.ts';

/**
 * `vps.placeInstance` (engine: the VPS reconciler, with the site's nodes from the nodes read model and the heartbeats
 * it heard). Decided on the site's book (`bc.evt.vps.holdBook.<siteId>`): what the instance takes comes from its
 * tenant's reservation and its runtime from its pool, never from the command; what the nodes already carry comes
 * from the book, never from the candidates.
 */
export const PlaceInstance = z.strictObject({
  siteId: ResourceId,
  tenantId: ResourceId,
  instanceId: ResourceId,
  candidates: z.array(HoldCandidate).max(10_000),
});
export type PlaceInstance = z.infer<typeof PlaceInstance>;

/** `vps.unplaceInstance` (engine): the instance's host removed it; the capacity it took on its node is free again. */
export const UnplaceInstance = z.strictObject({ siteId: ResourceId, tenantId: ResourceId, instanceId: ResourceId });
export type UnplaceInstance = z.infer<typeof UnplaceInstance>;

/**
 * `vps.requestRelocation` (engine: the autonomy engine's `relocate` lane): the instance's node `fromNodeId` is lost,
 * so it is to be placed again elsewhere at the site. Decided on the site's book; the reconciler carries it out.
 */
export const RequestRelocation = z.strictObject({
  siteId: ResourceId,
  tenantId: ResourceId,
  instanceId: ResourceId,
  fromNodeId: ResourceId,
  reason: z.string().min(1).max(400),
  /** The approved plan's digest (autonomy), kept for the record of who asked. */
  approvedPlanDigest: z.string().optional(),
});
export type RequestRelocation = z.infer<typeof RequestRelocation>;

/**
 * `vps.relocateInstance` (engine: the VPS reconciler, with the site's nodes as `vps.placeInstance` takes them): places
 * an instance whose relocation was requested on another node, never the one it leaves.
 */
export const RelocateInstance = PlaceInstance;
export type RelocateInstance = z.infer<typeof RelocateInstance>;
