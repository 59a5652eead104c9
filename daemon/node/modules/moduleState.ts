import { readFileSync, readdirSync, statSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_HOST_MODULES, passedProbesDigest, type HostModuleReport, type HostModuleState } from '../../../schemas/agent/hostModules.ts';
import { ModuleName } from '../../../schemas/fleet/moduleManifest.ts';
import { currentLink, currentVersion, modulesRoot, readRecord, recordsDir, type AppliedRecord } from './moduleLayout.ts';

/** The kernel's id of this boot: a new one at every boot (`/proc/sys/kernel/random/boot_id`). */
export const readBootId = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A module's state from its record: pending during the boot a `rebootRequired` version was applied in, failed on a failed probe. */
export function stateOf(record: AppliedRecord, bootId: string): HostModuleState {
  if (record.manifest.rebootRequired && record.appliedBootId === bootId) return 'pending';
  return record.probes.every((p) => p.ok) ? 'active' : 'failed';
}

/** Every module whose `current` is a version with its record, by name. */
export function installedModules(stateDir: string): { name: string; record: AppliedRecord }[] {
  let names: string[];
  try {
    names = readdirSync(modulesRoot(stateDir));
  } catch {
    return [];
  }
  return names
    .filter((n) => ModuleName.safeParse(n).success)
    .sort()
    .flatMap((name) => {
      const version = currentVersion(stateDir, name);
      const record = version === undefined ? undefined : readRecord(stateDir, name, version);
      return record ? [{ name, record }] : [];
    });
}

export function reportsOf(stateDir: string, bootId: string): HostModuleReport[] {
  return installedModules(stateDir)
    .slice(0, MAX_HOST_MODULES)
    .map(({ name, record }) => ({
      name,
      version: record.version,
      digest: record.manifestSha256,
      state: stateOf(record, bootId),
      probes: record.probes.map((p) => ({ name: p.name, ok: p.ok })),
    }));
}

/**
 * A node agent's message is at most 128 KiB (its JWT's payload limit) and a heartbeat is base64 inside JSON, so the
 * modules get at most this much JSON (base64: 107 KiB, the rest of the heartbeat and its envelope well under 21 KiB).
 */
export const MODULES_HEARTBEAT_BUDGET = 80 * 1024;

/** A report with its passing probes summarised (`passed`: their count and names' digest) and its failed ones listed. */
export function summarisePassed(report: HostModuleReport): HostModuleReport {
  const passing = report.probes.filter((p) => p.ok).map((p) => p.name);
  if (passing.length === 0) return report;
  return { ...report, probes: report.probes.filter((p) => !p.ok), passed: { count: passing.length, digest: passedProbesDigest(passing) } };
}

/**
 * The reports as they fit the budget. Past it, each module's passing probes are summarised (`summarisePassed`): the
 * control plane checks the summary against the probes the published version declares, so a host over budget still
 * proves each probe passed (a dropped name would read as a probe not run yet, and its rollout would wait for it to
 * its wave's deadline). Only past that (failed probes with long names on hundreds of modules) is the list cut: a module
 * left out is not reported at all, which no reader takes for healthy.
 */
export function fitReports(reports: readonly HostModuleReport[], budget = MODULES_HEARTBEAT_BUDGET): HostModuleReport[] {
  const size = (r: readonly HostModuleReport[]) => Buffer.byteLength(JSON.stringify(r));
  if (size(reports) <= budget) return [...reports];
  const fitted: HostModuleReport[] = [];
  let used = 2;
  for (const r of reports.map(summarisePassed)) {
    used += Buffer.byteLength(JSON.stringify(r)) + 1;
    if (used > budget) break;
    fitted.push(r);
  }
  return fitted;
}

/** What changes when anything a report reads changes: `current` replaced (a new inode), a record written (its folder's mtime). */
function fingerprint(stateDir: string): string {
  const parts: string[] = [];
  try {
    parts.push(String(statSync(modulesRoot(stateDir), { bigint: true }).mtimeNs));
    for (const name of readdirSync(modulesRoot(stateDir)).sort()) {
      const link = (() => {
        try {
          return String(lstatSync(currentLink(stateDir, name), { bigint: true }).ino);
        } catch {
          return '-';
        }
      })();
      const records = (() => {
        try {
          return String(statSync(recordsDir(stateDir, name), { bigint: true }).mtimeNs);
        } catch {
          return '-';
        }
      })();
      parts.push(`${name}:${link}:${records}`);
    }
  } catch {
    return 'none';
  }
  return parts.join('|');
}

/**
 * The heartbeat's `modules`, read from disk at each beat but rebuilt only when the fingerprint (a few stats) or the
 * boot id changed, so a steady host hashes and parses nothing.
 */
export function moduleReporter(stateDir: string, bootId: () => string = readBootId): () => HostModuleReport[] {
  let cached: { key: string; reports: HostModuleReport[] } | undefined;
  return () => {
    const key = `${bootId()}#${fingerprint(stateDir)}`;
    if (cached?.key !== key) cached = { key, reports: fitReports(reportsOf(stateDir, bootId())) };
    return cached.reports;
  };
}

/** `current/bin` of every installed module that is in effect (not pending), for probes' PATH. */
export function activeBinFolders(stateDir: string, bootId: string): string[] {
  return installedModules(stateDir)
    .filter(({ record }) => stateOf(record, bootId) !== 'pending')
    .map(({ name }) => join(currentLink(stateDir, name), 'bin'));
}
