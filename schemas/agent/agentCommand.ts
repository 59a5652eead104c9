import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { BmcConnection, BootMode } from './bmc.ts';
import { WipeMethod } from './diskWipe.ts';
import { HttpProxyRequest } from './httpProxy.ts';
import { InstanceRemoveParams, InstanceSpec } from './hostInstances.ts';
import { ModuleName, ModuleVersion } from '../fleet/moduleManifest.ts';
import { PublisherId, PublisherPublicKey } from '../fleet/publishers.ts';

/**
 * What an agent can be asked to do. `site` kinds run on the site agent against the node's BMC; `node` kinds run on
 * the ramdisk (or node) agent inside the machine.
 */
export const AgentCommandKinds = {
  'power.set': { runsOn: 'site', destructive: true },
  'power.get': { runsOn: 'site', destructive: false },
  'boot.setOnce': { runsOn: 'site', destructive: false },
  'boot.clear': { runsOn: 'site', destructive: false },
  'media.insert': { runsOn: 'site', destructive: false },
  'media.eject': { runsOn: 'site', destructive: false },
  'inventory.read': { runsOn: 'site', destructive: false },
  // Destructive: the machine's API may act on a POST (reboot, reset), so it is never sent twice.
  'site.httpProxy': { runsOn: 'site', destructive: true },
  'firmware.update': { runsOn: 'site', destructive: true },
  // Both reboot or reshape the machine: BIOS settings take effect at a reset, RAID changes destroy volumes' data.
  'bios.apply': { runsOn: 'site', destructive: true },
  'raid.apply': { runsOn: 'site', destructive: true },
  'disk.wipe': { runsOn: 'node', destructive: true },
  'image.write': { runsOn: 'node', destructive: true },
  'userdata.write': { runsOn: 'node', destructive: false },
  'inventory.report': { runsOn: 'node', destructive: false },
  'hardware.probe': { runsOn: 'node', destructive: false },
  // Both are idempotent and crash-safe (unpack to a temp folder, rename; `current` swapped by rename): a redelivery
  // after a crash runs them again and lands where one run would have.
  'module.apply': { runsOn: 'node', destructive: false },
  'module.remove': { runsOn: 'node', destructive: false },
  // Both converge to a journaled spec (an `apply` is idempotent by the runtime contract, a `remove` of an absent
  // instance is a no-op): a redelivery after a crash lands where one run would have.
  'instance.apply': { runsOn: 'node', destructive: false },
  'instance.remove': { runsOn: 'node', destructive: false },
} as const;
export type AgentCommandKind = keyof typeof AgentCommandKinds;
export const agentCommandKinds = Object.keys(AgentCommandKinds) as [AgentCommandKind, ...AgentCommandKind[]];

/**
 * Kinds only the ramdisk of the node's current boot may answer: what they report (a wiped or imaged disk, the hardware
 * seen from inside) is the platform's evidence about the machine, and an installed host's node agent belongs to the tenant.
 */
export const ramdiskOnlyKinds: ReadonlySet<AgentCommandKind> = new Set(['disk.wipe', 'image.write', 'hardware.probe']);

/** Kinds only an installed host's `bcd node` runs: a ramdisk has no modules (docs/modules.md) and runs no instances (docs/bcx.md). */
export const installedHostOnlyKinds: ReadonlySet<AgentCommandKind> = new Set(['module.apply', 'module.remove', 'instance.apply', 'instance.remove']);

/** A command's nonce: base64url, at least 128 bits. */
export const CommandNonce = z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'must be a base64url nonce of at least 128 bits');

/** A fresh nonce: 128 random bits. */
export const newNonce = (): string => randomBytes(16).toString('base64url');

/**
 * The nonce of one command of a step attempt, derived from the attempt's nonce (recorded when the attempt started)
 * so a resumed attempt sends the same commands, yet nobody can compute it before the attempt began.
 */
export const commandNonce = (attemptNonce: string, commandId: string): string =>
  createHash('sha256').update(`bc-command-nonce/v1/${attemptNonce}/${commandId}`).digest('base64url').slice(0, 32);

/** Subject-safe id of one step attempt's command: `<workflowId>-s<stepIndex>-a<attempt>`. */
export const AgentCommandId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,120}$/);

export const PowerAction = z.enum(['on', 'off', 'cycle', 'softOff']);
export const BootTarget = z.enum(['Pxe', 'Cd', 'UefiHttp']);

const BiosValue = z.union([z.string().max(1_024), z.number(), z.boolean()]);
/**
 * BIOS attributes to apply: a map, or `Name=Value` strings (what a deploy's inputs can carry). A string value is
 * converted to the type the attribute has on the BMC (number, boolean) when it is applied.
 */
export const BiosAttributesParam = z
  .union([
    z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,127}$/), BiosValue),
    z
      .array(
        z
          .string()
          .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,127}=.*$/s, 'must be Name=Value')
          .max(1_200),
      )
      .max(256),
    // One `Name=Value` input arrives as a plain string.
    z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,127}=.*$/s, 'must be Name=Value')
      .max(1_200)
      .transform((a) => [a]),
  ])
  .transform((attrs) => (Array.isArray(attrs) ? Object.fromEntries(attrs.map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)])) : attrs));

/** A list, or its one item alone (a deploy input given once). */
const oneOrMany = <T extends z.ZodType>(item: T) => z.preprocess((v) => (Array.isArray(v) || v === undefined ? v : [v]), z.array(item).max(64));

/** A volume to create: an object, or `<name>:<RAIDType>[:<drive>,<drive>…]` (drives by Id or URI; none: the BMC picks). */
export const RaidVolumeSpec = z.union([
  z
    .object({
      name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,62}$/),
      raidType: z.string().regex(/^[A-Za-z0-9]{1,16}$/),
      capacityBytes: z.number().int().positive().optional(),
      drives: z.array(z.string().min(1).max(300)).max(64).optional(),
      /** The Storage resource (Id or URI) to create it on; default: the first that supports `raidType` and lists `drives`. */
      storage: z.string().min(1).max(300).optional(),
    })
    .strict(),
  z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,62}:[A-Za-z0-9]{1,16}(:[^:]+)?$/, 'must be <name>:<RAIDType>[:<drive>,<drive>…]')
    .transform((spec) => {
      const [name, raidType, drives] = spec.split(':') as [string, string, string | undefined];
      return {
        name,
        raidType,
        ...(drives
          ? {
              drives: drives
                .split(',')
                .map((d) => d.trim())
                .filter(Boolean),
            }
          : {}),
      };
    }),
]);

/** Parameters per kind. Secrets never travel here: only references (`secret:<id>`). */
export const AgentCommandParams = {
  'power.set': z.object({ action: PowerAction }),
  'power.get': z.object({}),
  /** `mode` (default: the node's `bootMode`, else the mode the BIOS reports) is set where the BMC allows it. */
  'boot.setOnce': z.object({ target: BootTarget, mode: BootMode.optional() }),
  /**
   * Ends the boot the workflow set up: the site stops answering the node's PXE requests, and the BMC's boot override
   * is set back to none (BMCs that keep a one-time override as `Continuous` would boot it again at every restart).
   */
  'boot.clear': z.object({}),
  'media.insert': z.object({ imageUrl: z.string().url() }),
  'media.eject': z.object({}),
  'inventory.read': z.object({}),
  'site.httpProxy': HttpProxyRequest,
  'firmware.update': z.object({ imageUrl: z.string().url() }),
  /**
   * Writes the attributes as pending BIOS settings, resets the machine (they take effect during POST) and reads them
   * back: done only when every attribute shows its new value. Attributes that already hold it cause no reset.
   */
  'bios.apply': z.object({ attributes: BiosAttributesParam.default({}) }),
  /**
   * Deletes the named volumes (name, Id or URI; absent ones are skipped, a name two volumes share is refused), then
   * creates each volume that no volume of the same name already has: a retry after a crash creates nothing twice.
   */
  'raid.apply': z.object({ delete: oneOrMany(z.string().min(1).max(300)).default([]), create: oneOrMany(RaidVolumeSpec).default([]) }),
  'disk.wipe': z.object({ mode: WipeMethod.default('zero') }),
  'image.write': z.object({ imageUrl: z.string().url(), sha256: z.string().regex(/^[0-9a-f]{64}$/), disk: z.string().optional() }),
  /**
   * First-boot data, written onto the target disk as a cloud-init NoCloud seed (a `cidata` vfat partition at the
   * disk's end): `meta-data`, `user-data` (the SSH keys merged into `userData`), `network-config` (`networkConfig`).
   * `seed`: the node seed artefact (`schemas/agent/nodeSeed.ts`, the host's single-use `node` join
   * token inside) by its capability URL and digest; the ramdisk writes it into the image's `bc-seed` partition, if the
   * image has one. The built-in step adds it; the token itself never travels in a command.
   */
  'userdata.write': z.object({
    userData: z.string().max(65_536).optional(),
    sshKeys: z.array(z.string()).max(64).default([]),
    networkConfig: z.string().max(65_536).optional(),
    seed: z.object({ url: z.string().url(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  }),
  'inventory.report': z.object({}),
  /** The ramdisk reads the machine's disks, NICs, CPUs and memory from its kernel (`schemas/metal/inBandInventory.ts`). */
  'hardware.probe': z.object({}),
  /**
   * Installs `version` of `module` on the host and makes it `current` (docs/modules.md, "On the host"). The bundle is
   * fetched like an image (the site's verified cache first, then `bundleUrl`) and must hash to `bundleSha256`; the
   * host then verifies it itself against `trustedPublishers` (the keys the control plane trusts now) and checks that
   * its signed manifest names this module and version and hashes to `manifestSha256` (what `ModuleVersionPublished`
   * recorded). `probeTimeoutMs`: per probe.
   */
  'module.apply': z
    .object({
      module: ModuleName,
      version: ModuleVersion,
      bundleUrl: z.string().url(),
      bundleSha256: z.string().regex(/^[0-9a-f]{64}$/),
      manifestSha256: z.string().regex(/^[0-9a-f]{64}$/),
      trustedPublishers: z
        .array(z.object({ publisherId: PublisherId, publicKey: PublisherPublicKey }).strict())
        .min(1)
        .max(64),
      probeTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
    })
    .strict(),
  /**
   * Removes `module` (every version kept on the host) after checking the installed files against their manifests: a
   * changed, missing or added file is drift, refused (`MODULE_DRIFT`, nothing removed) unless `acceptDrift`.
   */
  'module.remove': z.object({ module: ModuleName, acceptDrift: z.boolean().default(false) }).strict(),
  /**
   * Converges one instance through the `runtime` plugin the host runs (docs/bcx.md, "Instances on `bcd node`"): the
   * spec is journaled first, then applied; answers `InstanceApplyResult`. The runtime's `state: 'error'` fails it.
   */
  'instance.apply': InstanceSpec,
  /** Removes the instance through the runtime that applied it and forgets its spec; answers `InstanceRemoveResult`. */
  'instance.remove': InstanceRemoveParams,
} satisfies Record<AgentCommandKind, z.ZodType>;

/**
 * A command for an agent, published (JSON) on the agent's command subject with `Nats-Msg-Id` = `commandId`. A
 * destructive command reaches an agent at most once per step attempt: JetStream dedupes re-publishes of the same
 * id, and the agent's journal refuses to execute an id twice.
 */
export const AgentCommand = z.object({
  commandId: AgentCommandId,
  kind: z.enum(agentCommandKinds),
  siteId: z.string(),
  nodeId: z.string(),
  workflowId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  destructive: z.boolean(),
  params: z.record(z.string(), z.unknown()),
  /** BMC endpoint, credentials reference and per-node options (auth, TLS, boot mode), for site commands. */
  bmc: BmcConnection.optional(),
  issuedAt: z.string(),
  /** ISO time after which the agent must not start executing it. */
  notAfter: z.string(),
  /**
   * Fresh and unguessable per command: the signed result must carry it and is published under it
   * (`Subjects.agentResult`), so no result can exist before its command does.
   */
  nonce: CommandNonce,
  /** When set, the one agent whose result counts (ramdisk-only kinds: the ramdisk the workflow booted); others skip it. */
  agentId: z.string().optional(),
});
export type AgentCommand = z.infer<typeof AgentCommand>;
