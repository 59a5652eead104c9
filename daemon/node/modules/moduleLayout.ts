import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ModuleProbeResult } from '../../../schemas/agent/hostModules.ts';
import { ModuleManifest, ModuleName, ModuleVersion } from '../../../schemas/fleet/moduleManifest.ts';
import { writeFileDurably } from '../../agent/durableFile.ts';

/**
 * Where modules live on a host (docs/modules.md, "On the host"):
 *
 *   <state>/modules/<name>/<version>/…        a version's files, exactly its manifest's
 *   <state>/modules/<name>/current            symlink to `<version>`, replaced by rename
 *   <state>/modules/<name>/.records/<version>.json   what was applied: the manifest, its digest, boot ids, probes
 *   <state>/modules/<name>/.tmp-* / .trash-*  a version being unpacked or removed (a crash may leave one)
 *
 * A version starts with a digit, so it never names `current` or a dot entry.
 */
export const modulesRoot = (stateDir: string) => join(stateDir, 'modules');
export const moduleDir = (stateDir: string, name: string) => join(modulesRoot(stateDir), name);
export const versionDir = (stateDir: string, name: string, version: string) => join(moduleDir(stateDir, name), version);
export const currentLink = (stateDir: string, name: string) => join(moduleDir(stateDir, name), 'current');
export const recordsDir = (stateDir: string, name: string) => join(moduleDir(stateDir, name), '.records');
export const recordFile = (stateDir: string, name: string, version: string) => join(recordsDir(stateDir, name), `${version}.json`);

/** What the host applied of one version: kept so removal and heartbeats need no bundle. */
export const AppliedRecord = z
  .object({
    module: ModuleName,
    version: ModuleVersion,
    manifestSha256: z.string(),
    publisherId: z.string(),
    manifest: ModuleManifest,
    appliedAt: z.string(),
    /** The boot the version was applied in: a `rebootRequired` version is pending while the host is still in it. */
    appliedBootId: z.string(),
    /** The probes' last results, and the boot they ran in (none yet: not probed). */
    probes: z.array(ModuleProbeResult),
    probedBootId: z.string().nullable(),
  })
  .strict();
export type AppliedRecord = z.infer<typeof AppliedRecord>;

export function readRecord(stateDir: string, name: string, version: string): AppliedRecord | undefined {
  try {
    return AppliedRecord.parse(JSON.parse(readFileSync(recordFile(stateDir, name, version), 'utf8')));
  } catch {
    return undefined;
  }
}

export function writeRecord(stateDir: string, record: AppliedRecord): void {
  writeFileDurably(recordFile(stateDir, record.module, record.version), JSON.stringify(record), { mode: 0o644 });
}

/** The version `current` points at, if it is a link to a version folder (anything else is not ours: undefined). */
export function currentVersion(stateDir: string, name: string): string | undefined {
  const link = currentLink(stateDir, name);
  try {
    if (!lstatSync(link).isSymbolicLink()) return undefined;
    const target = readlinkSync(link);
    return ModuleVersion.safeParse(target).success && existsSync(versionDir(stateDir, name, target)) ? target : undefined;
  } catch {
    return undefined;
  }
}
