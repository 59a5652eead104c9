import { cpus, hostname, totalmem } from 'node:os';
import { basename } from 'node:path';
import { AgentCommandKinds, installedHostOnlyKinds } from '../../schemas/agent/agentCommand.ts';
import type { WipeMethod, WipeReport } from '../../schemas/agent/diskWipe.ts';
import type { AgentExecutor, ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { writeCidata } from './cidataPartition.ts';
import { listDisks, sizeOfDisk, type DiskSelection } from './blockDevices.ts';
import { wipeDisk } from './diskWipe.ts';
import { probeHardware } from './hardwareProbe.ts';
import { writeImage } from './imageWrite.ts';
import { noCloudSeed } from './noCloudSeed.ts';
import { writeNodeSeed } from './seedWrite.ts';

/** The machine's disks as the ramdisk sees them: block devices on hardware, plain files in simulation. */
export interface RamdiskMachine {
  siteId: string;
  nodeId: string;
  disks: DiskSelection;
  /** The site agent's HTTP base URL (`bc.boot` on the kernel line): images are fetched from its cache first. */
  siteCacheUrl?: string;
  /** Where `hardware.probe` finds `sys/` and `proc/`: `/` on hardware, the simulated machine's tree in simulation. */
  hardwareRoot?: string;
}

async function pickDisk(selection: DiskSelection, wanted: string | undefined): Promise<string> {
  const disks = await listDisks(selection);
  if (disks.length === 0) throw new AgentError('NO_DISK', 'this machine has no disk');
  if (wanted === undefined) return disks[0]!.path;
  const found = disks.find((d) => d.path === wanted || basename(d.path) === wanted);
  if (!found) throw new AgentError('NO_DISK', `no disk ${wanted} on this machine`);
  return found.path;
}

/** Wipes every disk of the machine, one after the other: the result names each, and the control plane checks them all. */
async function wipeAll(selection: DiskSelection, method: WipeMethod, ctx: ExecutionContext): Promise<WipeReport> {
  const disks = await listDisks(selection);
  if (disks.length === 0) throw new AgentError('NO_DISK', 'this machine has no disk');
  const wiped = [];
  for (const disk of disks) wiped.push(await wipeDisk(disk, method, ctx));
  return { method, disks: wiped };
}

/** Runs the `node` kinds for the machine this ramdisk booted in. */
export function ramdiskExecutor(machine: RamdiskMachine): AgentExecutor {
  return {
    refuse(command) {
      if (command.siteId !== machine.siteId || command.nodeId !== machine.nodeId) {
        return `command for ${command.siteId}/${command.nodeId} reached the ramdisk of ${machine.siteId}/${machine.nodeId}`;
      }
      if (AgentCommandKinds[command.kind].runsOn !== 'node') return `${command.kind} runs on the site agent, not inside the machine`;
      if (installedHostOnlyKinds.has(command.kind)) return `${command.kind} runs on an installed host's bcd node, not in the ramdisk`;
      return undefined;
    },
    async execute(command, params, ctx) {
      switch (command.kind) {
        case 'inventory.report':
          return {
            hostname: hostname(),
            cpus: cpus().length,
            memoryMiB: Math.floor(totalmem() / (1 << 20)),
            disks: await Promise.all((await listDisks(machine.disks)).map(async (disk) => ({ ...disk, sizeBytes: await sizeOfDisk(disk.path) }))),
          };
        case 'hardware.probe':
          return probeHardware(machine.hardwareRoot);
        case 'disk.wipe':
          return wipeAll(machine.disks, params.mode as WipeMethod, ctx);
        case 'image.write': {
          const disk = await pickDisk(machine.disks, params.disk as string | undefined);
          return writeImage(disk, params.imageUrl as string, params.sha256 as string, ctx, machine.siteCacheUrl);
        }
        case 'userdata.write': {
          const disk = await pickDisk(machine.disks, undefined);
          const sshKeys = params.sshKeys as string[];
          const [userData, networkConfig] = [params.userData as string | undefined, params.networkConfig as string | undefined];
          const files = noCloudSeed({
            // A new instance id per deploy: cloud-init applies keys and users once per instance.
            instanceId: `${command.nodeId}-${command.workflowId}`,
            hostname: command.nodeId,
            sshKeys,
            userData,
            networkConfig,
          });
          // Only what the user asked for must land: an image without a partition table and nothing to carry passes.
          const required = sshKeys.length > 0 || userData !== undefined || networkConfig !== undefined;
          const written = { cidata: await writeCidata(disk, files, ctx, { required }), sshKeys: sshKeys.length };
          const seed = params.seed as { url: string; sha256: string } | undefined;
          return seed ? { ...written, seed: await writeNodeSeed(disk, seed, ctx, machine.siteCacheUrl) } : written;
        }
        default:
          throw new AgentError('WRONG_AGENT', `${command.kind} does not run in the ramdisk`);
      }
    },
  };
}
