import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/**
 * The drivers a machine is driven with, one per concern. Only drivers the platform implements are named: a profile
 * naming another is refused where it is declared (config, plugin registration), never when a workflow runs.
 * - `power`, `management`: how its BMC is spoken to (the site agent's Redfish client);
 * - `boot`: how it boots something the platform serves: `ipxe` (the site's ProxyDHCP/TFTP/iPXE, `boot.setOnce Pxe`)
 *   or `virtual-media` (an image the BMC mounts as a CD, `media.insert`);
 * - `deploy`: how an image gets onto its disk: `image-stream` (the bcd ramdisk streams and verifies it, and a release
 *   wipes from the ramdisk) or `agentless` (no agent ever runs on it: a deploy needs a workflow profile that works out of
 *   band, e.g. `talos-1.8`, and a release only ejects media and powers off, unverified).
 */
export const PowerDriver = z.enum(['redfish']);
export const ManagementDriver = z.enum(['redfish']);
export const BootDriver = z.enum(['ipxe', 'virtual-media']);
export const DeployDriver = z.enum(['image-stream', 'agentless']);
export type DeployDriver = z.infer<typeof DeployDriver>;

export const HardwareDrivers = z
  .object({ power: PowerDriver, management: ManagementDriver, boot: BootDriver, deploy: DeployDriver })
  .strict()
  // The image-stream deploy boots the bcd ramdisk over the network: a machine that cannot PXE-boot never runs it.
  .refine((d) => d.deploy !== 'image-stream' || d.boot === 'ipxe', {
    message: 'deploy image-stream boots the ramdisk over iPXE: boot must be ipxe',
    path: ['boot'],
  });
export type HardwareDrivers = z.infer<typeof HardwareDrivers>;

/** A kind of machine and the drivers it is driven with, as a config (`hardwareProfiles`) or a plugin declares it. */
export const HardwareProfileSpec = z.object({ description: z.string().max(500).default(''), drivers: HardwareDrivers }).strict();
export type HardwareProfileSpec = z.infer<typeof HardwareProfileSpec>;

/** A declared profile with its name (what `metal.enroll`'s `hardwareProfile` and a pool's `policy.hardwareProfile` name). */
export const HardwareProfile = HardwareProfileSpec.extend({ id: ResourceId }).strict();
export type HardwareProfile = z.infer<typeof HardwareProfile>;

/** Where a profile comes from, for listings and for the doctor. */
export type HardwareProfileSource = 'builtin' | 'config' | `plugin:${string}`;

/**
 * The built-in default: what every node was driven with before profiles existed (Redfish, iPXE, the ramdisk's image
 * stream). A node whose enrolment names a profile nobody declares any more (or never did: events older than the check)
 * runs with these drivers, or with `agentless` when it enrolled into an agentless pool.
 */
export const DEFAULT_HARDWARE_PROFILE = 'default';
export const defaultDrivers: HardwareDrivers = { power: 'redfish', management: 'redfish', boot: 'ipxe', deploy: 'image-stream' };

/**
 * The built-in profiles: the default, its agentless sibling (machines booted from virtual media that never run an
 * agent), and the two machine models the project's simulator serves (`npm start`'s simulated site enrols its machines
 * as these, so a free pool offers one row per model).
 */
export const builtinHardwareProfiles: readonly HardwareProfile[] = [
  { id: DEFAULT_HARDWARE_PROFILE, description: 'Redfish BMC, iPXE network boot, image streamed by the bcd ramdisk', drivers: defaultDrivers },
  {
    id: 'agentless',
    description: 'Redfish BMC, virtual-media boot, no agent on the machine (deploys need an out-of-band workflow profile)',
    drivers: { power: 'redfish', management: 'redfish', boot: 'virtual-media', deploy: 'agentless' },
  },
  { id: 'dmtf-public-tower', description: "The simulator's DMTF public mockup tower server", drivers: defaultDrivers },
  { id: 'hpe-ilo5-dl325', description: "The simulator's HPE ProLiant DL325 (iLO 5) mockup", drivers: defaultDrivers },
];
