import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BcxOperationError, type RuntimeDefinition, type RuntimeInstanceSpec, type RuntimeInstanceStatus } from '../sdk/bcx/index.ts';
import { writeCidataSeed } from './cidataSeed.ts';
import type { MicroVmConfig } from './config.ts';
import { startVm, stopVm, vmStatus } from './vmProcess.ts';
import { qemuPid, readRecord, validInstanceId, vmPaths, writeRecord, type VmPaths, type VmRecord } from './vmFolder.ts';

const run = promisify(execFile);
const IMAGE_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const GIB = 1 << 30;

interface Flavor {
  vcpus: number;
  memoryMiB: number;
  diskGiB: number;
}

const flavorOf = (spec: RuntimeInstanceSpec): Flavor => {
  const flavor = (spec.flavor ?? {}) as Partial<Flavor>;
  const whole = (value: unknown, fallback: number) => (Number.isInteger(value) && (value as number) > 0 ? (value as number) : fallback);
  return { vcpus: whole(flavor.vcpus, 1), memoryMiB: whole(flavor.memoryMiB, 512), diskGiB: whole(flavor.diskGiB, 0) };
};

/** A free TCP port on loopback, for a VM's forward (QEMU binds it; a port taken in between fails the start, by name). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The image file an instance's `image.ref` names, checked against its `sha256` when given; else why it cannot be used. */
async function resolveImage(
  config: MicroVmConfig,
  spec: RuntimeInstanceSpec,
): Promise<{ file: string; format: string; virtualSize: number } | { why: string }> {
  const image = (spec.image ?? {}) as { ref?: unknown; sha256?: unknown };
  if (typeof image.ref !== 'string' || !IMAGE_REF.test(image.ref))
    return { why: `image ref ${JSON.stringify(image.ref)} does not name a file of the images folder` };
  const file = join(config.imagesDir, image.ref);
  if (!existsSync(file)) return { why: `image ${image.ref} is not in ${config.imagesDir}` };
  if (typeof image.sha256 === 'string' && (await sha256Of(file)) !== image.sha256.toLowerCase()) {
    return { why: `image ${image.ref} does not have the sha256 the instance asks for` };
  }
  const { stdout } = await run(config.qemuImg, ['info', '--output=json', file]);
  const info = JSON.parse(stdout) as { format: string; 'virtual-size': number };
  return { file, format: info.format, virtualSize: info['virtual-size'] };
}

/**
 * The VM's disk and record: a qcow2 overlay on the image (the image itself is never written), the seed, host ports.
 * The record goes last: a folder without one is a creation cut short, which the next apply does again.
 */
async function createVm(config: MicroVmConfig, paths: VmPaths, spec: RuntimeInstanceSpec): Promise<VmRecord | { why: string }> {
  const image = await resolveImage(config, spec);
  if ('why' in image) return image;
  const flavor = flavorOf(spec);
  await writeCidataSeed(paths.seed, {
    instanceId: spec.id,
    hostname: spec.id,
    sshKeys: Array.isArray(spec.sshKeys) ? (spec.sshKeys as string[]) : [],
    ...(typeof spec.userData === 'string' ? { userData: spec.userData } : {}),
  });
  const temp = `${paths.overlay}.tmp`;
  const size = flavor.diskGiB * GIB > image.virtualSize ? [String(flavor.diskGiB * GIB)] : [];
  await run(config.qemuImg, ['create', '-q', '-f', 'qcow2', '-F', image.format, '-b', image.file, temp, ...size]);
  await rename(temp, paths.overlay);
  const forwards = [];
  for (const guest of config.guestPorts) forwards.push({ host: await freePort(), guest });
  const record: VmRecord = { image: image.file, vcpus: flavor.vcpus, memoryMiB: flavor.memoryMiB, forwards };
  await writeRecord(paths, record);
  return record;
}

/**
 * A runtime whose instances are QEMU VMs booting an image of the images folder (the project's own host image, with
 * cloud-init): `apply` creates the VM's overlay and NoCloud seed and starts or stops QEMU; `list` reads the VMs back
 * from the state folder (pidfile, QMP), so a restarted plugin knows every VM its previous life started; `remove` powers
 * the VM off and deletes its disk and seed. Calls on one instance run one at a time.
 */
export function microVmRuntime(config: MicroVmConfig, stateDir: string): Omit<RuntimeDefinition, 'manifest'> {
  const queues = new Map<string, Promise<unknown>>();
  const serialized = <T>(id: string, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(id) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => undefined);
    queues.set(id, settled);
    void settled.then(() => queues.get(id) === settled && queues.delete(id));
    return next;
  };
  const pathsOf = (id: string) => {
    if (!validInstanceId(id)) throw new BcxOperationError('INVALID_INSTANCE_ID', `instance id ${JSON.stringify(id)} cannot name a VM`);
    return vmPaths(stateDir, id);
  };
  const failed = async (paths: VmPaths, record: Omit<VmRecord, 'error'>, why: string, id: string): Promise<RuntimeInstanceStatus> => {
    await writeRecord(paths, { ...record, error: why });
    return { id, state: 'error', addresses: [], message: why };
  };

  return {
    async list() {
      const ids = await readdir(join(stateDir, 'vms')).catch(() => [] as string[]);
      const statuses: RuntimeInstanceStatus[] = [];
      for (const id of ids) {
        if (!validInstanceId(id)) continue;
        const paths = vmPaths(stateDir, id);
        const record = await readRecord(paths);
        if (record) statuses.push(await vmStatus(id, paths, record));
      }
      return statuses;
    },

    apply: (spec) =>
      serialized(spec.id, async () => {
        const paths = pathsOf(spec.id);
        await mkdir(paths.dir, { recursive: true, mode: 0o700 });
        await mkdir(join(paths.qmpSocket, '..'), { recursive: true, mode: 0o700 });
        let record = await readRecord(paths);
        if (!record || !existsSync(paths.overlay)) {
          const created = await createVm(config, paths, spec);
          if ('why' in created) return failed(paths, { image: '', vcpus: 0, memoryMiB: 0, forwards: [] }, created.why, spec.id);
          record = created;
        } else if (typeof spec.userData === 'string' && qemuPid(paths) === undefined) {
          // A prepared VM's first start (a warm slot taken), or a first apply retried before QEMU ran: this user data is its first boot's.
          await writeCidataSeed(paths.seed, {
            instanceId: spec.id,
            hostname: spec.id,
            sshKeys: Array.isArray(spec.sshKeys) ? (spec.sshKeys as string[]) : [],
            userData: spec.userData,
          });
        }
        if (record.error !== undefined) {
          const { error: _mended, ...rest } = record;
          record = rest;
          await writeRecord(paths, record);
        }
        if (spec.desiredState === 'running' && qemuPid(paths) === undefined) {
          const started = await startVm(config, paths, spec.id, record);
          if (!started.started) return failed(paths, record, started.why, spec.id);
        }
        if (spec.desiredState === 'stopped') await stopVm(paths, config.stopGraceMs);
        return vmStatus(spec.id, paths, record);
      }),

    remove: (id) =>
      serialized(id, async () => {
        const paths = pathsOf(id);
        await stopVm(paths, 0);
        await rm(paths.dir, { recursive: true, force: true });
      }),
  };
}
