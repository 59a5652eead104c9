import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BmcSimulator } from './bmc/index.ts';
import { linkId, type Json } from './bmc/treeStore.ts';

/** A disk as the machine's kernel sees it: whether or not its BMC lists it. */
export interface KernelDisk {
  readonly sizeBytes: number;
  readonly serial: string;
  readonly model: string | null;
}

type Resource = Json | undefined;
const members = (bmc: Pick<BmcSimulator, 'resource'>, doc: Resource): Json[] =>
  (Array.isArray(doc?.Members) ? doc.Members : []).flatMap((m) => {
    const uri = linkId(m);
    const member = uri === undefined ? undefined : bmc.resource(uri);
    return member && (member.Status as Json | undefined)?.State !== 'Absent' ? [member] : [];
  });
const linked = (bmc: Pick<BmcSimulator, 'resource'>, doc: Resource, name: string): Resource => {
  const uri = linkId(doc?.[name]);
  return uri === undefined ? undefined : bmc.resource(uri);
};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Sockets, each with its cores and threads: the system's Processors, or its ProcessorSummary where it lists none. */
function socketsOf(bmc: Pick<BmcSimulator, 'resource'>, system: Json): { cores: number; threads: number; model: string }[] {
  const cpus = members(bmc, linked(bmc, system, 'Processors')).filter((p) => (text(p.ProcessorType) ?? 'CPU') === 'CPU');
  const summary = (system.ProcessorSummary ?? {}) as Json;
  const model = text(summary.Model) ?? 'Simulated CPU';
  if (cpus.length > 0) {
    return cpus.map((p) => {
      const cores = num(p.TotalCores) ?? 1;
      return { cores, threads: num(p.TotalThreads) ?? cores, model: text(p.Model) ?? model };
    });
  }
  const count = num(summary.Count) ?? 1;
  const cores = Math.max(1, Math.floor((num(summary.CoreCount) ?? count) / count));
  return Array.from({ length: count }, () => ({ cores, threads: cores, model }));
}

function memoryMiBOf(bmc: Pick<BmcSimulator, 'resource'>, system: Json): number {
  const gib = num(((system.MemorySummary ?? {}) as Json).TotalSystemMemoryGiB);
  if (gib !== undefined) return Math.round(gib * 1024);
  const dimms = members(bmc, linked(bmc, system, 'Memory')).flatMap((d) => num(d.CapacityMiB) ?? []);
  return dimms.length > 0 ? dimms.reduce((a, b) => a + b, 0) : 8_192;
}

const macOf = (nic: Json) => {
  const hex = (text(nic.MACAddress) ?? text(nic.PermanentMACAddress) ?? '').toLowerCase().replace(/[^0-9a-f]/g, '');
  return hex.length === 12 && hex !== '000000000000' ? hex.match(/../g)!.join(':') : undefined;
};

/**
 * Writes what a Linux kernel on this machine would show under `root` (`sys/block`, `sys/class/net`, `proc/cpuinfo`,
 * `proc/meminfo`), in the layout `daemon/ramdisk/hardwareProbe.ts` reads on hardware: the CPUs, memory and NICs of the
 * BMC's system (the machine's model), and the disks the kernel sees, which need not be the drives the BMC lists. The
 * kernel keeps 3% of the memory to itself, as a real one keeps some.
 */
export function writeMachineHardware(root: string, bmc: Pick<BmcSimulator, 'resource'>, disks: readonly KernelDisk[]): void {
  const files = new Map<string, string>();
  const put = (path: string, content: string) => files.set(path, content);
  const system = members(bmc, bmc.resource('/redfish/v1/Systems'))[0] ?? {};

  for (const [i, disk] of disks.entries()) {
    const dir = `sys/block/nvme${i}n1`;
    put(`${dir}/size`, `${Math.floor(disk.sizeBytes / 512)}\n`);
    put(`${dir}/removable`, '0\n');
    put(`${dir}/ro`, '0\n');
    put(`${dir}/queue/rotational`, '0\n');
    put(`${dir}/device/serial`, `${disk.serial}\n`);
    if (disk.model !== null) put(`${dir}/device/model`, `${disk.model}\n`);
  }

  for (const [i, nic] of members(bmc, linked(bmc, system, 'EthernetInterfaces')).entries()) {
    const mac = macOf(nic);
    if (!mac) continue;
    const dir = `sys/class/net/eno${i + 1}`;
    const up = text(nic.LinkStatus) !== 'LinkDown' && text(nic.LinkStatus) !== 'NoLink';
    put(`${dir}/address`, `${mac}\n`);
    put(`${dir}/operstate`, up ? 'up\n' : 'down\n');
    put(`${dir}/type`, '1\n');
    put(`${dir}/device/vendor`, '0x8086\n');
    // The kernel refuses to read `speed` on a link that is down; here the file is simply absent.
    if (up && num(nic.SpeedMbps) !== undefined) put(`${dir}/speed`, `${num(nic.SpeedMbps)}\n`);
  }
  put('sys/class/net/lo/address', '00:00:00:00:00:00\n');
  put('sys/class/net/lo/operstate', 'unknown\n');

  const blocks: string[] = [];
  for (const [socket, { cores, threads, model }] of socketsOf(bmc, system).entries()) {
    for (let t = 0; t < threads; t++) {
      blocks.push(
        `processor\t: ${blocks.length}\nmodel name\t: ${model}\nphysical id\t: ${socket}\nsiblings\t: ${threads}\ncore id\t\t: ${t % cores}\ncpu cores\t: ${cores}\n`,
      );
    }
  }
  put('proc/cpuinfo', blocks.join('\n'));
  const memKiB = Math.floor(memoryMiBOf(bmc, system) * 1024 * 0.97);
  put('proc/meminfo', `MemTotal:       ${memKiB} kB\nMemFree:        ${Math.floor(memKiB * 0.9)} kB\n`);
  // A machine without disks still has the folder.
  writeTree(root, files, ['sys/block']);
}

const MARKER = '.hardware-digest';

/**
 * Replaces the tree under `root` with `files` (and the `folders`, made even when empty), unless it holds them already: a machine boots many times with the same
 * hardware, and rewriting some twenty files and their folders at each boot was 7 % of a simulated site's CPU.
 */
function writeTree(root: string, files: ReadonlyMap<string, string>, folders: readonly string[]): void {
  const digest = createHash('sha256')
    .update(JSON.stringify([...files, ...folders]))
    .digest('hex');
  const marker = join(root, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === digest) return;
  rmSync(root, { recursive: true, force: true });
  for (const folder of folders) mkdirSync(join(root, folder), { recursive: true });
  for (const [path, content] of files) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  writeFileSync(marker, digest);
}
