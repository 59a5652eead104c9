import { existsSync, mkdirSync } from 'node:fs';
import { readdir, rename, rm, rmdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentCommandParams } from '../../../schemas/agent/agentCommand.ts';
import type { HostModuleState, ModuleProbeResult } from '../../../schemas/agent/hostModules.ts';
import { verifyModuleBundle } from '../../../schemas/fleet/moduleBundle.ts';
import type { z } from 'zod';
import { syncFolder } from '../../agent/durableFile.ts';
import { AgentError } from '../../agent/errors.ts';
import { clearLeftovers, driftOf, removeFolder, unpackToTemp, type ModuleDrift } from './moduleFiles.ts';
import {
  currentLink,
  currentVersion,
  moduleDir,
  modulesRoot,
  readRecord,
  recordFile,
  recordsDir,
  versionDir,
  writeRecord,
  type AppliedRecord,
} from './moduleLayout.ts';
import { runProbes } from './moduleProbes.ts';
import { activeBinFolders, installedModules, readBootId, stateOf } from './moduleState.ts';

export type ModuleApplyParams = z.output<(typeof AgentCommandParams)['module.apply']>;
export type ModuleRemoveParams = z.output<(typeof AgentCommandParams)['module.remove']>;

/** A refusal with the bundle verifier's code (BUNDLE_*), passed through to the signed result as it is. */
export class BundleRefused extends Error {
  override name = 'BundleRefused';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AppliedModule {
  module: string;
  version: string;
  manifestSha256: string;
  /** False when the version was already current and intact: nothing on disk changed. */
  changed: boolean;
  /** The version `current` pointed at before, kept for rollback. */
  previous: string | null;
  /** Installed files found differing from the manifest and rewritten. */
  repaired: ModuleDrift[];
  state: HostModuleState;
  probes: ModuleProbeResult[];
}

export interface RemovedModule {
  module: string;
  removed: boolean;
  drift: (ModuleDrift & { version: string })[];
}

export interface ModuleHostOptions {
  stateDir: string;
  bootId?: () => string;
  /** The shell probes run in (default `/bin/sh`). */
  shell?: string;
}

/**
 * The modules of an installed host (docs/modules.md, "On the host"): applies verified bundles, removes modules,
 * runs probes. One operation at a time: the agent runs one command at a time, and `settle` runs beside it at start.
 */
export function moduleHost(options: ModuleHostOptions) {
  const { stateDir } = options;
  const bootId = options.bootId ?? readBootId;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  const probe = (record: AppliedRecord, timeoutMs: number) =>
    runProbes(record.manifest.probes, {
      binFolders: activeBinFolders(stateDir, bootId()),
      cwd: versionDir(stateDir, record.module, record.version),
      timeoutMs,
      ...(options.shell ? { shell: options.shell } : {}),
    });

  /** Makes `current` point at `version`: a new link renamed over the old one, then the folder fsynced. */
  async function switchCurrent(name: string, version: string): Promise<void> {
    const tmp = join(moduleDir(stateDir, name), `.tmp-link-${process.pid}-${Date.now()}`);
    await symlink(version, tmp);
    await rename(tmp, currentLink(stateDir, name));
    syncFolder(moduleDir(stateDir, name));
  }

  async function apply(params: ModuleApplyParams, bundle: Uint8Array, probeTimeoutMs = params.probeTimeoutMs): Promise<AppliedModule> {
    const verdict = verifyModuleBundle(bundle, params.trustedPublishers);
    if (!verdict.ok) throw new BundleRefused(verdict.code, verdict.message);
    const { manifest, manifestSha256 } = verdict;
    if (manifest.name !== params.module || manifest.version !== params.version || manifestSha256 !== params.manifestSha256) {
      throw new AgentError(
        'MODULE_MISMATCH',
        `the bundle holds ${manifest.name}@${manifest.version} (manifest ${manifestSha256}), not ${params.module}@${params.version} (${params.manifestSha256})`,
      );
    }
    return serial(async () => {
      const { module: name, version } = params;
      const folder = moduleDir(stateDir, name);
      if (!existsSync(recordsDir(stateDir, name))) {
        mkdirSync(recordsDir(stateDir, name), { recursive: true, mode: 0o755 });
        // The new folders' entries must outlive a power loss too, not only what is written inside them.
        syncFolder(modulesRoot(stateDir));
        syncFolder(stateDir);
      }
      await clearLeftovers(folder);
      const previous = currentVersion(stateDir, name) ?? null;
      const installed = readRecord(stateDir, name, version);
      const target = versionDir(stateDir, name, version);
      const sameManifest = installed?.manifestSha256 === manifestSha256;
      const drift = sameManifest ? await driftOf(target, manifest).catch(() => undefined) : undefined;
      const intact = drift !== undefined && drift.length === 0;
      if (intact && previous === version) {
        return {
          module: name,
          version,
          manifestSha256,
          changed: false,
          previous,
          repaired: [],
          state: stateOf(installed!, bootId()),
          probes: installed!.probes,
        };
      }
      if (!intact) {
        const tmp = await unpackToTemp(folder, manifest, verdict.files);
        await removeFolder(target);
        await rename(tmp, target);
        syncFolder(folder);
      }
      const record: AppliedRecord = {
        module: name,
        version,
        manifestSha256,
        publisherId: verdict.publisherId,
        manifest,
        appliedAt: new Date().toISOString(),
        appliedBootId: bootId(),
        probes: [],
        probedBootId: null,
      };
      writeRecord(stateDir, record);
      await switchCurrent(name, version);
      // The previous version stays for rollback; anything older goes.
      for (const entry of await readdir(folder)) {
        if (entry === version || entry === previous || entry === 'current' || entry.startsWith('.')) continue;
        await removeFolder(join(folder, entry));
        await rm(recordFile(stateDir, name, entry), { force: true });
      }
      const state = stateOf(record, bootId());
      if (state === 'pending') return { module: name, version, manifestSha256, changed: true, previous, repaired: drift ?? [], state, probes: [] };
      const probed = { ...record, probes: await probe(record, probeTimeoutMs), probedBootId: bootId() };
      writeRecord(stateDir, probed);
      return { module: name, version, manifestSha256, changed: true, previous, repaired: drift ?? [], state: stateOf(probed, bootId()), probes: probed.probes };
    });
  }

  function remove(params: ModuleRemoveParams): Promise<RemovedModule> {
    return serial(async () => {
      const name = params.module;
      const folder = moduleDir(stateDir, name);
      const entries = await readdir(folder).catch(() => undefined);
      if (entries === undefined) return { module: name, removed: false, drift: [] };
      await clearLeftovers(folder);
      const versions = entries.filter((e) => e !== 'current' && !e.startsWith('.'));
      const drift: RemovedModule['drift'] = [];
      for (const version of versions) {
        const record = readRecord(stateDir, name, version);
        if (!record) {
          drift.push({ version, path: '.', problem: 'unexpected' });
          continue;
        }
        for (const d of await driftOf(versionDir(stateDir, name, version), record.manifest)) drift.push({ version, ...d });
      }
      if (drift.length > 0 && !params.acceptDrift) {
        const listed = drift.map((d) => `${d.version}/${d.path} ${d.problem}`).join(', ');
        throw new AgentError('MODULE_DRIFT', `${name} not removed, its files drifted: ${listed.length > 1_500 ? `${listed.slice(0, 1_500)}…` : listed}`);
      }
      // `current` first: from then on the module is not in effect, whatever a crash leaves behind.
      await rm(currentLink(stateDir, name), { force: true });
      syncFolder(folder);
      for (const version of versions) await removeFolder(versionDir(stateDir, name, version));
      await rm(recordsDir(stateDir, name), { recursive: true, force: true });
      await clearLeftovers(folder);
      await rmdir(folder);
      syncFolder(join(folder, '..'));
      return { module: name, removed: true, drift };
    });
  }

  /**
   * At agent start: probes every installed module not probed in this boot (a `rebootRequired` version takes effect
   * now), so heartbeats report what the host runs after its reboot.
   */
  function settle(probeTimeoutMs = 30_000): Promise<void> {
    return serial(async () => {
      const boot = bootId();
      for (const { record } of installedModules(stateDir)) {
        if (record.probedBootId === boot || stateOf(record, boot) === 'pending') continue;
        writeRecord(stateDir, { ...record, probes: await probe(record, probeTimeoutMs), probedBootId: boot });
      }
    });
  }

  return { apply, remove, settle };
}
export type ModuleHost = ReturnType<typeof moduleHost>;
