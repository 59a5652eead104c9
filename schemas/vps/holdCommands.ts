import { z } from 'zod';
import { LabelSelector, NodeLabels } from '../metal/nodeLabels.ts';
import { ResourceId } from '../ids.ts';
import { HostResources } from './placement.ts';

/** Who a hold keeps capacity for: a tenant's placements, or a pool's. */
export const HoldHolder = z.union([z.strictObject({ tenantId: ResourceId }), z.strictObject({ poolId: ResourceId })]);
export type HoldHolder = z.infer<typeof HoldHolder>;

/** How long a hold may keep capacity: at least a minute, at most thirty days. */
export const HOLD_MAX_SECONDS = 30 * 24 * 3_600;

/**
 * What a caller asks of `POST /v1/holds`: `nodes` nodes at a site matching `selector`, each keeping `resources` or,
 * without them, the whole node, for `durationSeconds`. A tenant token's holder is its tenant whatever the body says.
 */
export const PlaceHoldRequest = z.strictObject({
  holdId: ResourceId.optional(),
  siteId: ResourceId,
  holder: HoldHolder.optional(),
  nodes: z.number().int().min(1).max(64).default(1),
  resources: HostResources.optional(),
  selector: LabelSelector.default({}),
  durationSeconds: z.number().int().min(60).max(HOLD_MAX_SECONDS),
});
export type PlaceHoldRequest = z.infer<typeof PlaceHoldRequest>;

/** A node of the site as the API's snapshot saw it (`PlacementCandidate`): what the hold is decided against. */
export const HoldCandidate = z.strictObject({
  nodeId: z.string().min(1),
  labels: NodeLabels,
  capacity: HostResources,
  allocated: HostResources,
  schedulable: z.boolean(),
  agentless: z.boolean(),
});
export type HoldCandidate = z.infer<typeof HoldCandidate>;

/**
 * `vps.placeHold` (edge: `POST /v1/holds` sends it with the site's nodes from the nodes read model, so no caller can
 * describe nodes it makes up). Decided on the site's hold book, whose own holds, not the read model's, are the ones
 * that count, so two holds decided at once cannot both take the same capacity.
 */
export const PlaceHold = z.strictObject({
  holdId: ResourceId,
  siteId: ResourceId,
  holder: HoldHolder,
  nodes: z.number().int().min(1).max(64),
  resources: HostResources.optional(),
  selector: LabelSelector,
  durationSeconds: z.number().int().min(60).max(HOLD_MAX_SECONDS),
  candidates: z.array(HoldCandidate).max(10_000),
});
export type PlaceHold = z.infer<typeof PlaceHold>;

/** `vps.releaseHold`: gives the hold's capacity back before it expires; `tenantId` (a tenant's route) must be its holder. */
export const ReleaseHold = z.strictObject({ siteId: ResourceId, holdId: ResourceId, tenantId: ResourceId.optional() });
export type ReleaseHold = z.infer<typeof ReleaseHold>;
