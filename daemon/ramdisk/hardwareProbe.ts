import { access, readdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { InBandInventory, type InBandCpus, type InBandDisk, type InBandNic } from '../../schemas/metal/inBandInventory.ts';
import { MacAddress } from '../../schemas/metal/macAddress.ts';
import { AgentError } from '../agent/errors.ts';
import { identityOf, NOT_A_DISK, readText } from './blockDevices.ts';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const flag = (text: string | null): boolean | null => (text === '1' ? true : text === '0' ? false : null);

async function probeDisks(sysfs: string): Promise<InBandDisk[]> {
  const names = (await readdir(join(sysfs, 'block')).catch(() => [] as string[])).filter((name) => !NOT_A_DISK.test(name)).sort();
  const disks: InBandDisk[] = [];
  for (const name of names) {
    const dir = await realpath(join(sysfs, 'block', name));
    // `size` counts 512-byte sectors whatever the logical block size; an empty card reader slot has 0.
    const sectors = Number((await readText(join(dir, 'size'))) ?? '0');
    if (!(sectors > 0)) continue;
    disks.push({
      name,
      sizeBytes: sectors * 512,
      ...(await identityOf(dir)),
      rotational: flag(await readText(join(dir, 'queue', 'rotational'))),
      removable: flag(await readText(join(dir, 'removable'))) === true,
    });
  }
  return disks;
}

/** Interfaces with a `device` link are hardware (PCI, USB, virtio); loopback, bridges, bonds, VLANs and tunnels are not. */
async function probeNics(sysfs: string): Promise<InBandNic[]> {
  const names = (await readdir(join(sysfs, 'class', 'net')).catch(() => [] as string[])).sort();
  const nics: InBandNic[] = [];
  for (const name of names) {
    const dir = join(sysfs, 'class', 'net', name);
    if (!(await exists(join(dir, 'device')))) continue;
    const mac = MacAddress.safeParse(await readText(join(dir, 'address')));
    if (!mac.success) continue;
    // Reading `speed` fails (EINVAL) on a link that is down; virtio answers -1.
    const speed = Number((await readText(join(dir, 'speed'))) ?? '-1');
    nics.push({
      name,
      mac: mac.data,
      link: (await readText(join(dir, 'operstate'))) ?? 'unknown',
      speedMbps: Number.isInteger(speed) && speed > 0 ? speed : null,
    });
  }
  return nics;
}

/** Parses `/proc/cpuinfo`: one block per logical CPU, `key\t: value` lines. */
export function parseCpuinfo(text: string): InBandCpus {
  const blocks = text
    .split(/\n\s*\n/)
    .map(
      (block) =>
        new Map(
          block
            .split('\n')
            .flatMap((line) => (line.includes(':') ? [[line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()] as const] : [])),
        ),
    )
    .filter((fields) => fields.has('processor'));
  if (blocks.length === 0) throw new AgentError('HARDWARE_UNREADABLE', '/proc/cpuinfo lists no processor');
  const coresBySocket = new Map<string, number | undefined>();
  for (const fields of blocks) {
    const cores = Number(fields.get('cpu cores'));
    coresBySocket.set(fields.get('physical id') ?? '0', Number.isInteger(cores) && cores > 0 ? cores : undefined);
  }
  const cores = [...coresBySocket.values()];
  const first = blocks[0]!;
  return {
    logical: blocks.length,
    sockets: coresBySocket.size,
    cores: cores.every((c) => c !== undefined) ? cores.reduce<number>((sum, c) => sum + c, 0) : null,
    // x86 says `model name`; arm64 and others name the part elsewhere, or not at all.
    model: first.get('model name') ?? first.get('Model') ?? first.get('cpu model') ?? null,
  };
}

/** `MemTotal` of `/proc/meminfo`, in MiB. */
export function parseMeminfo(text: string): number {
  const kib = /^MemTotal:\s+(\d+) kB$/m.exec(text)?.[1];
  if (kib === undefined || Number(kib) <= 0) throw new AgentError('HARDWARE_UNREADABLE', '/proc/meminfo has no MemTotal');
  return Math.floor(Number(kib) / 1024);
}

/**
 * `hardware.probe`: the machine's disks, NICs, CPUs and memory as the running kernel sees them, read from sysfs and
 * procfs under `root` (`/` in a ramdisk; a captured or simulated tree in tests and the simulator).
 */
export async function probeHardware(root = '/'): Promise<InBandInventory> {
  const sysfs = join(root, 'sys');
  const read = (path: string) =>
    readFile(join(root, path), 'utf8').catch((cause: unknown) => {
      throw new AgentError('HARDWARE_UNREADABLE', `${path} cannot be read`, { cause });
    });
  return InBandInventory.parse({
    disks: await probeDisks(sysfs),
    nics: await probeNics(sysfs),
    cpus: parseCpuinfo(await read('proc/cpuinfo')),
    memoryMiB: parseMeminfo(await read('proc/meminfo')),
  });
}
