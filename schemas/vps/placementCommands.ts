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
