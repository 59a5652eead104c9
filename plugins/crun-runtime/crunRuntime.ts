import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { HostInstanceId } from '../../schemas/agent/hostInstances.ts';
import { defineRuntime, type BcxPluginDefinition, type RuntimeInstanceStatus } from '../sdk/bcx/index.ts';
import type { CrunRuntimeConfig } from './config.ts';
import { tailOf, type CrunCli } from './crunCli.ts';
import { instanceRecords, type CrunInstanceRecord } from './instanceRecords.ts';
import { containerNetwork } from './containerNetwork.ts';
import { BundleFiles, ociConfig } from './ociBundle.ts';
import { mountRoot, unmountRoot } from './rootOverlay.ts';

/** What this runtime reads of the spec `bcd node` applies (the rest, such as the flavor's name, it ignores). */
const CrunInstanceSpec = z.looseObject({
  id: HostInstanceId,
  desiredState: z.enum(['running', 'stopped']),
  image: z.looseObject({ ref: z.string().min(1) }),
  flavor: z.looseObject({ vcpus: z.number().int().positive(), memoryMiB: z.number().int().positive() }).optional(),
  userData: z.string().optional(),
  sshKeys: z.array(z.string()).optional(),
});

export const CRUN_RUNTIME_VERSION = '0.1.0';

/**
 * The container runtime over crun (docs/bcx.md, "The crun runtime"): an instance is an OCI container whose bundle lives in
 * `<state>/bundles/<id>/`, its root an overlay over a local image rootfs. It declares `warm-start`: a first apply
 * `stopped` prepares the bundle folder and starts nothing, so the first running apply, with its user data, is the
 * container's first start.
 */
export function crunRuntime(options: { id: string; config: CrunRuntimeConfig; crun: CrunCli; stateDir: string }): BcxPluginDefinition {
  const { config, crun, stateDir } = options;
  const records = instanceRecords(stateDir);
  const bundleOf = (id: string) => join(stateDir, 'bundles', id);
  const network = config.network ? containerNetwork(config.network) : undefined;
  const notes = [
    ...(network ? [] : ['loopback only: no network is configured']),
    ...(config.limits === 'none' ? ['flavor limits not enforced (limits: none)'] : []),
  ];
  const running = (id: string, record: CrunInstanceRecord | undefined): RuntimeInstanceStatus => ({
    id,
    state: 'running',
    addresses: record?.address ? [record.address] : [],
    ...(notes.length > 0 ? { message: notes.join('; ') } : {}),
  });
  const stopped = (id: string): RuntimeInstanceStatus => ({ id, state: 'stopped', addresses: [] });
  const failed = (id: string, record: CrunInstanceRecord, message: string): RuntimeInstanceStatus => {
    records.write(id, { ...record, failure: message });
    return { id, state: 'error', addresses: [], message };
  };

  /** SIGTERM, up to `stopTimeoutMs` for the container to go, then SIGKILL. */
  async function stop(id: string): Promise<void> {
    const deadline = Date.now() + config.stopTimeoutMs;
    await crun.kill(id, 'TERM').catch(() => undefined);
    while (Date.now() < deadline && (await crun.state(id))?.status === 'running') await sleep(100);
    if ((await crun.state(id))?.status !== 'running') return;
    await crun.kill(id, 'KILL');
    for (let i = 0; i < 100 && (await crun.state(id))?.status === 'running'; i++) await sleep(50);
  }

  async function start(spec: z.infer<typeof CrunInstanceSpec>, record: CrunInstanceRecord): Promise<RuntimeInstanceStatus> {
    const image = config.images[spec.image.ref]!;
    const bundle = bundleOf(spec.id);
    const consoleLog = join(bundle, BundleFiles.console);
    await mountRoot(bundle, image.rootfs);
    if (network && record.address) await network.attach(spec.id, record.address);
    const inputs = {
      ...(network && record.address ? { netnsPath: network.netnsPath(spec.id) } : {}),
      id: spec.id,
      bundle,
      image,
      flavor: spec.flavor,
      hasUserData: existsSync(join(bundle, BundleFiles.userData)),
      hasSshKeys: existsSync(join(bundle, BundleFiles.sshKeys)),
    };
    writeFileSync(join(bundle, BundleFiles.config), JSON.stringify(ociConfig(config, inputs), null, 1), { mode: 0o600 });
    try {
      await crun.run(spec.id, bundle, consoleLog);
    } catch (err) {
      return failed(spec.id, record, (err as Error).message);
    }
    await sleep(image.settleMs);
    if ((await crun.state(spec.id))?.status !== 'running')
      return failed(spec.id, record, `the container exited within ${image.settleMs} ms of its start: ${tailOf(consoleLog)}`.slice(0, 1_000));
    return running(spec.id, record);
  }

  return defineRuntime({
    manifest: { id: options.id, version: CRUN_RUNTIME_VERSION, features: ['warm-start'] },
    list: async () =>
      Promise.all(
        records.ids().map(async (id) => {
          const record = records.read(id);
          const state = await crun.state(id);
          if (state?.status === 'running') return running(id, record);
          return record?.failure ? { id, state: 'error' as const, addresses: [], message: record.failure } : stopped(id);
        }),
      ),
    apply: async (raw) => {
      const spec = CrunInstanceSpec.parse(raw);
      const before = records.read(spec.id);
      const taken = new Set(records.ids().flatMap((id) => (id !== spec.id && records.read(id)?.address ? [records.read(id)!.address!] : [])));
      const address = network ? (before?.address ?? network.allocate(taken)) : undefined;
      const record: CrunInstanceRecord = { image: spec.image.ref, desiredState: spec.desiredState, ...(address ? { address } : {}) };
      const image = config.images[spec.image.ref];
      if (!image) return failed(spec.id, record, `no image ${spec.image.ref} on this host (the runtime's config names none)`);
      if (!statSync(image.rootfs, { throwIfNoEntry: false })?.isDirectory())
        return failed(spec.id, record, `image ${spec.image.ref}: no rootfs at ${image.rootfs}`);
      const bundle = bundleOf(spec.id);
      mkdirSync(bundle, { recursive: true, mode: 0o700 });
      // Only a first apply carries user data; a later one leaves the delivered file as it is.
      if (spec.userData !== undefined) writeFileSync(join(bundle, BundleFiles.userData), spec.userData, { mode: 0o600 });
      if (spec.sshKeys !== undefined) writeFileSync(join(bundle, BundleFiles.sshKeys), spec.sshKeys.map((k) => `${k}\n`).join(''), { mode: 0o644 });
      const state = await crun.state(spec.id);
      if (spec.desiredState === 'running') {
        if (state?.status === 'running') {
          records.write(spec.id, record);
          return running(spec.id, record);
        }
        // Exited or never started: crun keeps a stopped container's id; a start is a new container on the same bundle.
        if (state) await crun.delete(spec.id);
        records.write(spec.id, record);
        return start(spec, record);
      }
      if (state?.status === 'running' || state?.status === 'paused') await stop(spec.id);
      if (state) await crun.delete(spec.id);
      await unmountRoot(bundle);
      await network?.detach(spec.id);
      records.write(spec.id, record);
      return stopped(spec.id);
    },
    remove: async (id) => {
      if (!HostInstanceId.safeParse(id).success) return;
      const state = await crun.state(id);
      if (state?.status === 'running' || state?.status === 'paused') await crun.kill(id, 'KILL').catch(() => undefined);
      if (state) await crun.delete(id);
      const bundle = bundleOf(id);
      await unmountRoot(bundle);
      await network?.detach(id);
      rmSync(bundle, { recursive: true, force: true });
      records.forget(id);
    },
  });
}
