import { z } from 'zod';

/**
 * How `disk.wipe` erases a disk:
 * - `zero` (the default): every byte written with zeros, fsynced, then every byte read back;
 * - `discard`: the whole device discarded (`blkdiscard`, secure discard where the device supports it; a hole punched
 *   through a file-backed disk), then a seeded random sample of blocks across the device read back as zeros. A device
 *   that cannot discard, or reads back data after the discard, is zeroed instead (and reported as `zero`).
 */
export const WipeMethod = z.enum(['zero', 'discard']);
export type WipeMethod = z.infer<typeof WipeMethod>;

/** The disk a wipe covered, as the ramdisk identified it (serial and model from sysfs; null when the device has none). */
const wipedDiskIdentity = {
  path: z.string().min(1),
  serial: z.string().nullable(),
  model: z.string().nullable(),
  // Measured on the device (BLKGETSIZE64 via sysfs, or a file's size): never 0, which would wipe nothing.
  sizeBytes: z.number().int().positive(),
};

/** Which blocks a `discard` wipe read back: `count` blocks of `blockBytes` at offsets derived from `seed` (daemon/ramdisk/wipeSample.ts). */
export const WipeSample = z.object({
  seed: z.string().regex(/^[0-9a-f]{32}$/),
  count: z.number().int().positive(),
  blockBytes: z.number().int().positive(),
});
export type WipeSample = z.infer<typeof WipeSample>;

/** One disk of a wipe result: how it was erased and what was read back. */
export const WipedDisk = z.discriminatedUnion('method', [
  z.object({ ...wipedDiskIdentity, method: z.literal('zero'), verifiedBytes: z.number().int().nonnegative() }).strict(),
  z
    .object({
      ...wipedDiskIdentity,
      method: z.literal('discard'),
      discardedBytes: z.number().int().nonnegative(),
      /** The device took a secure discard (BLKSECDISCARD): the blocks are erased, not only unmapped. */
      secure: z.boolean(),
      sample: WipeSample,
    })
    .strict(),
]);
export type WipedDisk = z.infer<typeof WipedDisk>;

/** The payload of a successful `disk.wipe` result, signed by the ramdisk: every disk it wiped. */
export const WipeReport = z.object({ method: WipeMethod, disks: z.array(WipedDisk).min(1) }).strict();
export type WipeReport = z.infer<typeof WipeReport>;

/** Bytes a wiped disk's erase reached: all of them only when the whole device was zeroed or discarded. */
export const erasedBytesOf = (disk: WipedDisk): number => (disk.method === 'zero' ? disk.verifiedBytes : disk.discardedBytes);
