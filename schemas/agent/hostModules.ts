import { z } from 'zod';
import { ModuleName, ModuleVersion } from '../fleet/moduleManifest.ts';

/**
 * Where a module stands on a host: `active` (its files are what `current` points at and every probe passed),
 * `pending` (a `rebootRequired` version unpacked during this boot: it takes effect at the next one) or `failed` (a
 * probe failed).
 */
export const HostModuleState = z.enum(['active', 'pending', 'failed']);
export type HostModuleState = z.infer<typeof HostModuleState>;

/** One probe's outcome as `bcd node` ran it: the exit code (null when it timed out or was killed) and its output's tail. */
export const ModuleProbeResult = z
  .object({
    name: z.string().max(63),
    ok: z.boolean(),
    exitCode: z.number().int().nullable(),
    /** The last 500 characters of what it wrote (stdout and stderr, interleaved as they came). */
    output: z.string().max(500),
  })
  .strict();
export type ModuleProbeResult = z.infer<typeof ModuleProbeResult>;

/** What a host's heartbeat says of one installed module (`current`): its version, manifest digest, state and probes. */
export const HostModuleReport = z
  .object({
    name: ModuleName,
    version: ModuleVersion,
    /** sha256 of the version's `manifest.json`: the `manifestSha256` of `ModuleVersionPublished`. */
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    state: HostModuleState,
    probes: z.array(z.object({ name: z.string().max(63), ok: z.boolean() }).strict()).max(32),
  })
  .strict();
export type HostModuleReport = z.infer<typeof HostModuleReport>;

/** At most this many modules ride on one heartbeat. */
export const MAX_HOST_MODULES = 256;
