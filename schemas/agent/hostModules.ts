import { createHash } from 'node:crypto';
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

/**
 * The sha256 (hex) of probe names, sorted and one per line: what a heartbeat over its budget sends in place of the
 * passing probes it leaves out (`HostModuleReport.passed`), and what the control plane recomputes from the probes the
 * published manifest declares to check that each of them passed.
 */
export const passedProbesDigest = (names: readonly string[]): string =>
  createHash('sha256')
    .update([...names].sort().join('\n'))
    .digest('hex');

/** The passing probes a report leaves out to fit the heartbeat: how many, and their names' `passedProbesDigest`. */
export const PassedProbes = z.object({ count: z.number().int().min(1).max(32), digest: z.string().regex(/^[0-9a-f]{64}$/) }).strict();
export type PassedProbes = z.infer<typeof PassedProbes>;

/**
 * What a host's heartbeat says of one installed module (`current`): its version, manifest digest, state and probes.
 * `probes` lists every probe's outcome; a heartbeat past its budget lists only the failed ones and summarises the
 * passing ones in `passed`, so a reader can still tell each declared probe passed (and never reads a left-out probe as
 * one not run yet).
 */
export const HostModuleReport = z
  .object({
    name: ModuleName,
    version: ModuleVersion,
    /** sha256 of the version's `manifest.json`: the `manifestSha256` of `ModuleVersionPublished`. */
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    state: HostModuleState,
    probes: z.array(z.object({ name: z.string().max(63), ok: z.boolean() }).strict()).max(32),
    passed: PassedProbes.optional(),
  })
  .strict();
export type HostModuleReport = z.infer<typeof HostModuleReport>;

/**
 * The probe names a report shows passed: the listed ones that passed, and (when `passed` summarises the rest) `declared`
 * names not listed, provided their count and `passedProbesDigest` are exactly the summary's. A summary that does not
 * match proves none of them: the report is then read as not carrying those probes.
 */
export function passedProbeNames(report: Pick<HostModuleReport, 'probes' | 'passed'>, declared: readonly string[]): Set<string> {
  const passed = new Set(report.probes.filter((p) => p.ok).map((p) => p.name));
  if (report.passed === undefined) return passed;
  const listed = new Set(report.probes.map((p) => p.name));
  const summarised = [...new Set(declared)].filter((name) => !listed.has(name));
  if (summarised.length === report.passed.count && passedProbesDigest(summarised) === report.passed.digest) for (const name of summarised) passed.add(name);
  return passed;
}

/**
 * What a host's report of a module's version says once it is settled: `healthy` (active, every probe the published
 * manifest declares reported and passing, and the manifest digest the one published when it is given), `failed`, or
 * undefined while it says nothing yet: `pending`, or active before it reported every declared probe (`bcd node`
 * switches `current` first and probes after, so an active report with no probes is not a pass).
 */
export function moduleReportVerdict(
  report: Pick<HostModuleReport, 'state' | 'probes' | 'passed' | 'digest'>,
  declared: readonly string[],
  manifestSha256?: string,
): 'healthy' | 'failed' | undefined {
  if (report.state === 'pending') return undefined;
  const passed = passedProbeNames(report, declared);
  const carried = (name: string) => passed.has(name) || report.probes.some((p) => p.name === name);
  if (report.state === 'active' && !declared.every(carried)) return undefined;
  const healthy = report.state === 'active' && report.probes.every((p) => p.ok) && (manifestSha256 === undefined || manifestSha256 === report.digest);
  return healthy ? 'healthy' : 'failed';
}

/** At most this many modules ride on one heartbeat. */
export const MAX_HOST_MODULES = 256;
