import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/** `vps.createFlavor`: an instance size, what quota counts. */
export const CreateFlavor = z
  .object({
    flavorId: ResourceId,
    vcpus: z.number().int().positive().max(1_024),
    memoryMib: z.number().int().positive().max(16_777_216),
    diskGib: z.number().int().positive().max(1_048_576),
  })
  .strict();
export type CreateFlavor = z.infer<typeof CreateFlavor>;

/** `vps.mapFlavor`: the flavor is sold in the pool as the provider's `offerId`; mapping again replaces the offer. */
export const MapFlavor = z.object({ flavorId: ResourceId, poolId: ResourceId, offerId: z.string().min(1).max(200) }).strict();
export type MapFlavor = z.infer<typeof MapFlavor>;
