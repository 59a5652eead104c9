/**
 * A libvirt account: one libvirt connection (a host's QEMU driver), the flavours operators may create on it and the
 * boot images by name. libvirt itself has no sizes, no images catalogue and no regions; the account says them.
 */
import { z } from 'zod';

/** A size the account offers: the domain gets these vCPUs and memory; `diskGib` is what a flavour promises a disk. */
export const LibvirtFlavour = z.object({
  offerId: z.string().regex(/^[a-z0-9][a-z0-9.-]{0,39}$/, 'lower-case letters, digits, . and -'),
  vcpus: z.number().int().min(1).max(64),
  memoryMib: z.number().int().min(32).max(1_048_576),
  diskGib: z.number().int().min(1),
});
export type LibvirtFlavour = z.infer<typeof LibvirtFlavour>;

export const LibvirtConfig = z.object({
  /** The platform puts the account's region here; libvirt has none, so it only names the host for operators. */
  region: z.string().min(1).max(63),
  /**
   * The connection URI, QEMU driver only: `qemu:///system` (the host's libvirtd, as root) or `qemu:///session` (a
   * per-user daemon), optionally `qemu+unix://` with `?socket=<path>` for a daemon on a socket of its own.
   */
  uri: z
    .string()
    .regex(/^qemu(\+unix)?:\/\/\/(system|session)(\?socket=\/[A-Za-z0-9._/-]+)?$/, 'qemu:///system or qemu:///session, optionally ?socket=/path')
    .default('qemu:///system'),
  /** A libvirt network to attach each domain to (its DHCP leases give the addresses); none: no network interface. */
  network: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .optional(),
  /**
   * A libvirt storage pool for each instance's NoCloud seed (a small ISO labelled `cidata` with the SSH keys and user
   * data, attached as a read-only CD-ROM, which cloud-init reads at first boot). Without one, a create that carries
   * SSH keys or user data is refused: the guest would never get them.
   */
  seedPool: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .optional(),
  flavours: z
    .array(LibvirtFlavour)
    .min(1)
    .default([{ offerId: 'small', vcpus: 1, memoryMib: 512, diskGib: 10 }]),
  /**
   * Boot images by the name a create asks for: an absolute path to a qcow2 image on the libvirt host, attached as a
   * transient disk (QEMU writes to an overlay libvirt discards when the domain stops, so the image is never
   * changed), or null for a domain with no disk (network boot, tests).
   */
  images: z
    .record(
      z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
      z
        .string()
        .regex(/^\/[A-Za-z0-9._/-]+$/)
        .nullable(),
    )
    .default({}),
});
export type LibvirtConfig = z.infer<typeof LibvirtConfig>;
