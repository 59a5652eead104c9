import { describe, expect, it } from 'vitest';
import { CrunRuntimeConfig } from '../../plugins/crun-runtime/config.ts';
import { ociConfig } from '../../plugins/crun-runtime/ociBundle.ts';

const config = (extra: Record<string, unknown> = {}) =>
  CrunRuntimeConfig.parse({ images: { plain: { rootfs: '/srv/rootfs', args: ['/sbin/init'] } }, ...extra });
const inputs = (extra: Record<string, unknown> = {}) => ({
  id: 'vm-1',
  bundle: '/state/bundles/vm-1',
  image: config().images.plain!,
  flavor: { vcpus: 2, memoryMiB: 512 },
  hasUserData: false,
  hasSshKeys: false,
  ...extra,
});
type Oci = { mounts: { destination: string; source: string; options?: string[] }[]; linux: Record<string, unknown>; process: Record<string, unknown> };

describe("the crun runtime's OCI config", () => {
  it('puts the flavor on the cgroup under limits: flavor, and nothing under limits: none', () => {
    const limited = ociConfig(config(), inputs()) as unknown as Oci;
    expect(limited.linux.resources).toEqual({ memory: { limit: 512 * 1024 * 1024 }, cpu: { quota: 200_000, period: 100_000 } });
    expect(limited.linux.cgroupsPath).toBe('/bc-crun/vm-1');
    const free = ociConfig(config({ limits: 'none', cgroupManager: 'disabled' }), inputs()) as unknown as Oci;
    expect(free.linux.resources).toBeUndefined();
    expect(free.linux.cgroupsPath).toBeUndefined();
  });

  it('binds user data and SSH keys read-only only when the bundle has them', () => {
    const bare = ociConfig(config(), inputs()) as unknown as Oci;
    expect(bare.mounts.map((m) => m.destination)).not.toContain('/run/bc/user-data');
    const given = ociConfig(config(), inputs({ hasUserData: true, hasSshKeys: true })) as unknown as Oci;
    expect(given.mounts.filter((m) => m.destination.startsWith('/run/bc/'))).toEqual([
      { destination: '/run/bc/user-data', type: 'bind', source: '/state/bundles/vm-1/user-data', options: ['bind', 'ro', 'nosuid', 'nodev'] },
      { destination: '/run/bc/ssh-keys', type: 'bind', source: '/state/bundles/vm-1/ssh-keys', options: ['bind', 'ro', 'nosuid', 'nodev'] },
    ]);
  });

  it('gives no device cgroup and no CAP_MKNOD, so a container makes no device node', () => {
    const oci = ociConfig(config(), inputs()) as unknown as Oci & { process: { capabilities: { bounding: string[] } } };
    expect(JSON.stringify(oci.linux)).not.toContain('devices');
    expect(oci.process.capabilities.bounding).not.toContain('CAP_MKNOD');
    expect(oci.process.noNewPrivileges).toBe(true);
  });
});
