import { z } from 'zod';
import { LabelSelector, type NodeLabels } from '../metal/nodeLabels.ts';

/** What an instance takes of a host, in the units flavors sell. */
export const HostResources = z.strictObject({
  vcpus: z.number().int().nonnegative(),
  memoryMib: z.number().int().nonnegative(),
  diskGib: z.number().int().nonnegative(),
});
export type HostResources = z.infer<typeof HostResources>;

/** A deployed node as placement sees it at one instant (one snapshot: the same snapshot always places the same way). */
export interface PlacementCandidate {
  readonly nodeId: string;
  readonly labels: NodeLabels;
  readonly capacity: HostResources;
  /** Taken by instances placed on it already. */
  readonly allocated: HostResources;
  /** Deployed, in service, its agent alive: anything else takes no instance. */
  readonly schedulable: boolean;
  /** An agentless node (the Talos pool) runs no `bcd node`, hence no runtime, and is never held. */
  readonly agentless: boolean;
}

/** Capacity a tenant or pool keeps on one node until `expiresAtMs`: invisible to every other placement. */
export interface PlacementHold {
  readonly holdId: string;
  readonly nodeId: string;
  readonly holder: { readonly tenantId: string } | { readonly poolId: string };
  readonly resources: HostResources;
  readonly expiresAtMs: number;
}

export const PlacementRequest = z.strictObject({
  instanceId: z.string().min(1),
  tenantId: z.string().min(1),
  poolId: z.string().min(1),
  /** The runtime the pool selects (`vps({ runtimes })`): only nodes carrying `bc.dev/driver.<runtime>` qualify. */
  runtime: z.string().min(1),
  resources: HostResources,
  selector: LabelSelector.default({}),
});
export type PlacementRequest = z.infer<typeof PlacementRequest>;

/** Why a node did not take the instance: one per candidate, so a refusal explains itself. */
export type Exclusion =
  | { readonly nodeId: string; readonly why: 'NOT_SCHEDULABLE' | 'AGENTLESS' | 'NO_RUNTIME_DRIVER' | 'SELECTOR_MISMATCH' }
  | { readonly nodeId: string; readonly why: 'INSUFFICIENT_CAPACITY'; readonly short: readonly (keyof HostResources)[] };

export type PlacementDecision =
  | {
      readonly placed: true;
      readonly nodeId: string;
      /** The free capacity it had for this request (its held capacity counted when the request's holder holds it). */
      readonly freeBefore: HostResources;
      /** Holds of the requester this placement drew from, with how much of each. */
      readonly fromHolds: readonly { readonly holdId: string; readonly resources: HostResources }[];
      readonly considered: number;
    }
  | { readonly placed: false; readonly code: 'NO_NODE_FITS'; readonly excluded: readonly Exclusion[] };
