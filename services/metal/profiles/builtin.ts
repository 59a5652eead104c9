import { AgentCommandKinds, type AgentCommandKind } from '../../../schemas/agent/agentCommand.ts';
import type { NodeOperation } from '../../../schemas/metal/workflow.ts';
// Built-in profiles are written exactly as a plugin's are: against the SDK's public entry.
import { defineProfile, fromInput, type Profile, type ProfileStep } from '../../../plugins/sdk/index.ts';

/** An agent command as a step: where it runs and whether it destroys data come from the command kind. */
const agent = (kind: AgentCommandKind, params: Record<string, unknown> = {}, extra: Partial<ProfileStep> = {}): ProfileStep => ({
  id: kind,
  runsOn: AgentCommandKinds[kind].runsOn,
  destructive: AgentCommandKinds[kind].destructive,
  params,
  ...extra,
});

/**
 * Boot the machine into the ramdisk over PXE and wait until the agent of this boot has registered a fresh key. A boot
 * lost at the reset (no script fetched within `BC_RAMDISK_BOOT_BUDGET_MS`, or no join before the timeout) restarts
 * from `boot.setOnce`: three boots in all before the workflow fails.
 */
const bootRamdisk: readonly ProfileStep[] = [
  agent('boot.setOnce', { target: 'Pxe' }),
  agent('power.set', { action: 'cycle' }),
  { id: 'wait.agentJoined', runsOn: 'control-plane', timeoutMs: 600_000, retry: { maxAttempts: 3 } },
];

/**
 * Ends the network boot `bootRamdisk` set up, before the workflow's last power step: the site stops answering the
 * node's PXE requests and the boot override is set back to none. A BMC that kept the override as `Continuous` (AMI
 * MegaRAC) would otherwise PXE-boot the ramdisk again at the deploy's last restart, and at every one after.
 */
const endNetworkBoot = agent('boot.clear');

export const inspectProfile = defineProfile({
  id: 'inspect',
  version: 1,
  target: 'metal',
  role: 'inspect',
  steps: [agent('inventory.read')],
});

/**
 * Inspection from inside as well: the BMC's inventory, then the ramdisk booted as a deploy boots it reads the machine's
 * disks, NICs, CPUs and memory from its kernel (`hardware.probe`, signed like every ramdisk result); the machine is
 * left off. `metal.recordInventory` compares the two and records what disagrees as the node's findings.
 */
export const inBandInspectProfile = defineProfile({
  id: 'inspect-inband',
  version: 1,
  target: 'metal',
  role: 'inspect',
  steps: [agent('inventory.read'), ...bootRamdisk, agent('hardware.probe'), endNetworkBoot, agent('power.set', { action: 'off' })],
});

/** The operation input that asks an inspection to boot the ramdisk and look from inside (`metal.inspect`). */
export const IN_BAND_INPUT = 'inBand';

export const deployProfile = defineProfile({
  id: 'deploy',
  version: 2,
  target: 'metal',
  role: 'deploy',
  steps: [
    ...bootRamdisk,
    agent('image.write', { imageUrl: fromInput('imageUrl'), sha256: fromInput('imageSha256') }, { timeoutMs: 1_800_000 }),
    agent('userdata.write', { userData: fromInput('userData'), sshKeys: fromInput('sshKeys', []), networkConfig: fromInput('networkConfig') }),
    endNetworkBoot,
    agent('power.set', { action: 'cycle' }),
  ],
});

/**
 * A deploy that first shapes the machine: BIOS settings (`biosAttributes`: `Name=Value` strings, applied at a reset
 * and verified after it) and RAID volumes (`raidDelete`: volume names; `raidCreate`: `<name>:<RAIDType>[:<drive>,…]`),
 * then the plain deploy. Without those inputs both steps change nothing and cost no reset.
 */
export const configuredDeployProfile = defineProfile({
  id: 'deploy-configured',
  version: 2,
  target: 'metal',
  role: 'deploy',
  steps: [
    agent('bios.apply', { attributes: fromInput('biosAttributes', []) }, { timeoutMs: 1_800_000, retry: { maxAttempts: 2 } }),
    agent('raid.apply', { delete: fromInput('raidDelete', []), create: fromInput('raidCreate', []) }, { timeoutMs: 1_800_000 }),
    ...deployProfile.steps,
  ],
});

/** The operation input that carries the node's pool's wipe method (`policy.wipeMethod`); absent: `zero`. */
export const WIPE_METHOD_INPUT = 'wipeMethod';

/**
 * Wipe every disk, then power off. Wipes are never retried blindly: a second wipe of a half-wiped disk is fine, but
 * each attempt must be attested.
 */
const wipeAndPowerOff: readonly ProfileStep[] = [
  ...bootRamdisk,
  agent('disk.wipe', { mode: fromInput(WIPE_METHOD_INPUT, 'zero') }, { timeoutMs: 3_600_000, retry: { maxAttempts: 2 } }),
  endNetworkBoot,
  agent('power.set', { action: 'off' }),
];

export const releaseProfile = defineProfile({
  id: 'release',
  version: 3,
  target: 'metal',
  role: 'release',
  steps: [...wipeAndPowerOff],
});

/** A retired machine keeps no tenant data: it is wiped like a release, and stays off. */
export const retireProfile = defineProfile({
  id: 'retire',
  version: 2,
  target: 'metal',
  role: 'retire',
  steps: [...wipeAndPowerOff],
});

export const rescueProfile = defineProfile({
  id: 'rescue',
  version: 2,
  target: 'metal',
  role: 'rescue',
  steps: [...bootRamdisk, endNetworkBoot],
});

/**
 * Remediations (`metal.remediate`) may run any profile; these are built for it. `bmc-check` reads the power state
 * (does the BMC answer again?) and changes nothing; `power-cycle`, `power-on` and `power-off` set the power (the
 * console's power buttons), so they are destructive and run only where the remediation may destroy.
 */
export const bmcCheckProfile = defineProfile({ id: 'bmc-check', version: 1, target: 'metal', role: 'remediate', steps: [agent('power.get')] });
export const powerCycleProfile = defineProfile({
  id: 'power-cycle',
  version: 1,
  target: 'metal',
  role: 'remediate',
  steps: [agent('power.set', { action: 'cycle' })],
});
const powerProfile = (action: 'on' | 'off') =>
  defineProfile({ id: `power-${action}`, version: 1, target: 'metal', role: 'remediate', steps: [agent('power.set', { action })] });
export const powerOnProfile = powerProfile('on');
export const powerOffProfile = powerProfile('off');

/**
 * The release of a node in an agentless pool: no ramdisk boots, so nothing is wiped; the site agent takes any
 * install media out and powers the machine off. Such a release is unverified, and only a pool that opted in
 * (`policy.allowUnverifiedRelease`) gets the node back in `ready`.
 */
export const agentlessReleaseProfile = defineProfile({
  id: 'release-agentless',
  version: 1,
  target: 'metal',
  role: 'release',
  steps: [agent('media.eject'), agent('power.set', { action: 'off' })],
});

/** `release-agentless` for a retirement: the same out-of-band steps, under the same pool opt-in. */
export const agentlessRetireProfile = defineProfile({ ...agentlessReleaseProfile, id: 'retire-agentless', role: 'retire' });

/** The operation input the node sets when its pool runs no agent (`metal.undeploy` of an agentless node). */
export const AGENTLESS_INPUT = 'agentless';

/** The built-in profile for each node operation. */
export const builtinProfiles: Readonly<Record<NodeOperation, Profile>> = {
  inspect: inspectProfile,
  deploy: deployProfile,
  release: releaseProfile,
  rescue: rescueProfile,
  retire: retireProfile,
  remediate: bmcCheckProfile,
};

const agentlessProfiles: Readonly<Partial<Record<NodeOperation, Profile>>> = { release: agentlessReleaseProfile, retire: agentlessRetireProfile };

/** Every built-in profile a request may name: one per operation, and the variants. */
export const builtinProfileCatalog: readonly Profile[] = [
  ...Object.values(builtinProfiles),
  configuredDeployProfile,
  powerCycleProfile,
  powerOnProfile,
  powerOffProfile,
  inBandInspectProfile,
];

/**
 * The built-in profile `workflow.start` runs when the request names none: agentless nodes release and retire without a
 * ramdisk; an inspection asked to look from inside boots one.
 */
export function builtinProfileFor(operation: NodeOperation, inputs: Readonly<Record<string, unknown>>): Profile {
  if (operation === 'inspect' && inputs[IN_BAND_INPUT] === true) return inBandInspectProfile;
  return (inputs[AGENTLESS_INPUT] === true ? agentlessProfiles[operation] : undefined) ?? builtinProfiles[operation];
}
