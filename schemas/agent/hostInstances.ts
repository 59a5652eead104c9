import { z } from 'zod';
import { BcxPluginId, RuntimeInstanceStatus } from '../bcx/bcxProtocol.ts';
import { SshPublicKey } from '../sshPublicKey.ts';

/** An instance's id on the host: what the runtime is told and what names its journal file (subject- and path-safe). */
export const HostInstanceId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'an instance id is lower-case letters, digits, "_" and "-" (at most 63)');

export const InstanceDesiredState = z.enum(['running', 'stopped']);
export type InstanceDesiredState = z.infer<typeof InstanceDesiredState>;

/**
 * The params of `instance.apply` (docs/bcx.md, "Instances on `bcd node`"): what the runtime converges one instance to.
 * `runtime` names the plugin (its Hello lists kind `runtime` and this id). `sshKeys` go with every apply. `userData`
 * is read by the instance at its first boot: the host passes it on the instance's first `apply` only, keeps it (0600)
 * only until that apply is answered, and never logs or reports it.
 */
export const InstanceSpecFields = z
  .object({
    id: HostInstanceId,
    runtime: BcxPluginId,
    flavor: z
      .object({
        name: z.string().min(1).max(64),
        vcpus: z.number().int().positive().max(1_024),
        memoryMiB: z
          .number()
          .int()
          .positive()
          .max(16 * 1024 * 1024),
        diskGiB: z.number().int().nonnegative().max(1_048_576),
      })
      .strict(),
    /** The image (or rootfs) the runtime boots, by reference: the runtime fetches and verifies it. */
    image: z
      .object({
        ref: z.string().min(1).max(1_024),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional(),
      })
      .strict(),
    desiredState: InstanceDesiredState,
    /**
     * The OpenSSH public keys the instance lets in (its tenant's `vps.createInstance` keys, validated the same way).
     * Public: journaled with the spec and passed on every apply, so a runtime may install them whenever it (re)creates
     * the instance; absent when there are none.
     */
    sshKeys: z.array(SshPublicKey).min(1).max(32).optional(),
    userData: z.string().max(65_536).optional(),
    /**
     * A warm slot (docs/bcx.md, "Warm slots"): prepared ahead of time, stopped, never started, to be handed to a create.
     * Only a runtime declaring `warm-start` takes one (`WARM_START_UNSUPPORTED` otherwise); `desiredState` is `stopped`.
     */
    warm: z.literal(true).optional(),
    /**
     * The warm slot this instance takes: the host renames the slot's record to this instance, keeps the runtime's id
     * (the slot's), and passes this apply's user data as the first start's. No such slot on the host: created cold.
     */
    fromSlot: HostInstanceId.optional(),
  })
  .strict();
export const InstanceSpec = InstanceSpecFields.refine(
  (spec) => !spec.warm || (spec.desiredState === 'stopped' && spec.userData === undefined && spec.fromSlot === undefined),
  {
    message: 'a warm slot is prepared stopped, with no user data, and takes no slot',
  },
);
export type InstanceSpec = z.infer<typeof InstanceSpec>;

/** The params of `instance.remove`: the instance goes, whatever its runtime (the host knows it from its journal). */
export const InstanceRemoveParams = z.object({ id: HostInstanceId }).strict();
export type InstanceRemoveParams = z.infer<typeof InstanceRemoveParams>;

/** What `instance.apply` answers: the runtime's own answer, and whether user data went with this apply. */
export const InstanceApplyResult = z.object({ runtime: BcxPluginId, status: RuntimeInstanceStatus, userDataDelivered: z.boolean() }).strict();
export type InstanceApplyResult = z.infer<typeof InstanceApplyResult>;

/** What `instance.remove` answers: `removed` false when the host had no such instance (a redelivery, say). */
export const InstanceRemoveResult = z.object({ id: HostInstanceId, removed: z.boolean() }).strict();
export type InstanceRemoveResult = z.infer<typeof InstanceRemoveResult>;

/**
 * What a host's heartbeat says of one instance: the state asked for, and the runtime's last answer (`pending` until
 * one came: an apply that a plugin crash cut short stays `pending` until the host applies it again).
 */
export const HostInstanceReport = z
  .object({
    id: HostInstanceId,
    runtime: BcxPluginId,
    desiredState: InstanceDesiredState,
    state: RuntimeInstanceStatus.shape.state,
    addresses: RuntimeInstanceStatus.shape.addresses,
    message: RuntimeInstanceStatus.shape.message,
    /** A warm slot, not an instance: the pool's keeper counts it ready once `stopped`, and reaps one it does not want. */
    warm: z.literal(true).optional(),
  })
  .strict();
export type HostInstanceReport = z.infer<typeof HostInstanceReport>;

/** At most this many instances ride on one heartbeat. */
export const MAX_HOST_INSTANCES = 512;
