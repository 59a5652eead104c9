import { aggregateRef } from '../aggregateRef.ts';

export type FlavorState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly flavorId: string;
      readonly vcpus: number;
      readonly memoryMib: number;
      readonly diskGib: number;
      /** The provider offer id the flavor is sold as, by pool id. */
      readonly offers: Readonly<Record<string, string>>;
    };

/** The offer the flavor is sold as in `poolId`; undefined when the pool does not sell it. */
export function offerIn(flavor: FlavorState, poolId: string): string | undefined {
  return flavor.exists && Object.hasOwn(flavor.offers, poolId) ? flavor.offers[poolId] : undefined;
}

/** What another aggregate may read of a flavor (`bc.evt.vps.flavor.<flavorId>`). */
export const flavorRef = aggregateRef<FlavorState>('vps', 'flavor');
