import { z } from 'zod';

/**
 * An image the runtime can run: a root filesystem already on the host (no registry: an operator or the host image
 * puts it there) and the command that is the container's init. `settleMs`: how long after its start a container must
 * still be running to count as started; one that exits sooner is answered `state: 'error'` with its console's tail.
 */
export const CrunImage = z.strictObject({
  rootfs: z.string().startsWith('/'),
  args: z.array(z.string().min(1)).min(1),
  env: z.array(z.string().regex(/^[^=]+=/)).default(['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']),
  settleMs: z.number().int().min(0).max(60_000).default(500),
});
export type CrunImage = z.infer<typeof CrunImage>;

/**
 * The runtime's configuration, a JSON file named by `--config <path>` in its pin's args (docs/bcx.md, "The crun runtime").
 * - `crunRoot`: crun's own state (`crun --root`); under `/run` by default so that, like the containers, it does not
 *   outlive a reboot.
 * - `cgroupManager`: crun's; `cgroupfs` needs the unified (v2) hierarchy at `/sys/fs/cgroup`, as Debian 12 mounts it.
 * - `limits`: `flavor` puts the flavor's memory and vCPUs on the container's cgroup (the memory and cpu controllers
 *   must be enabled there); `none` does not, and says so in every running instance's message.
 * - `stopTimeoutMs`: how long a stop waits after SIGTERM before SIGKILL.
 * - `network`: a host bridge (created if absent, with the subnet's first address) each container joins through a veth
 *   pair, with an address of its own from `subnet`; none: a container has loopback only, and no addresses.
 */
export const CrunRuntimeConfig = z.strictObject({
  crun: z.string().startsWith('/').default('/usr/bin/crun'),
  crunRoot: z.string().startsWith('/').default('/run/bc-crun-runtime'),
  cgroupManager: z.enum(['cgroupfs', 'systemd', 'disabled']).default('cgroupfs'),
  limits: z.enum(['flavor', 'none']).default('flavor'),
  stopTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
  network: z
    .strictObject({
      bridge: z.string().regex(/^[A-Za-z0-9_-]{1,15}$/, 'a bridge is an interface name (at most 15 characters)'),
      subnet: z.string().regex(/^(\d{1,3}\.){3}\d{1,3}\/(1[6-9]|2\d|30)$/, 'an IPv4 subnet from /16 to /30, such as 10.88.0.0/24'),
    })
    .optional(),
  images: z.record(z.string().min(1).max(255), CrunImage),
});
export type CrunRuntimeConfig = z.infer<typeof CrunRuntimeConfig>;
