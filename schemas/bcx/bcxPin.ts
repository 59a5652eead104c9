import { z } from 'zod';
import { BcxPluginId } from './bcxProtocol.ts';

/**
 * A plugin as the daemon's plugins folder pins it: `<plugins folder>/<id>/bcx-plugin.json`. The daemon hashes
 * `program` (a path inside the plugin's folder) before every start and refuses to run it when the digest differs, so
 * a changed plugin runs only once someone pins its new digest.
 */
export const BcxPin = z.strictObject({
  id: BcxPluginId,
  /** The plugin's program, relative to its folder. */
  program: z
    .string()
    .min(1)
    .max(255)
    .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'program is a path inside the plugin folder'),
  /** What runs the program (an absolute path such as `/usr/bin/node`); none when the program is itself executable. */
  interpreter: z.string().startsWith('/').max(255).optional(),
  args: z.array(z.string().max(1_000)).max(32).default([]),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type BcxPin = z.infer<typeof BcxPin>;
