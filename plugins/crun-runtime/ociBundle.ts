import type { CrunImage, CrunRuntimeConfig } from './config.ts';

/** Where an instance's files live in its bundle folder (`<state>/bundles/<id>/`). */
export const BundleFiles = {
  config: 'config.json',
  /** The overlay's mount point: the image's rootfs below, the instance's own `upper` above. */
  rootfs: 'rootfs',
  upper: 'upper',
  work: 'work',
  userData: 'user-data',
  sshKeys: 'ssh-keys',
  console: 'console.log',
} as const;

/** Where the container finds what `bcd node` gave it (read-only). */
export const UserDataPath = '/run/bc/user-data';
export const SshKeysPath = '/run/bc/ssh-keys';

export interface BundleInputs {
  readonly id: string;
  readonly bundle: string;
  readonly image: CrunImage;
  readonly flavor: { readonly vcpus: number; readonly memoryMiB: number } | undefined;
  readonly hasUserData: boolean;
  readonly hasSshKeys: boolean;
  /** The network namespace prepared for it (`containerNetwork.ts`); none: a new one, loopback only. */
  readonly netnsPath?: string;
}

// Docker's default set less CAP_MKNOD: with no device cgroup (below) a container must not make device nodes.
const capabilities = [
  'CAP_AUDIT_WRITE',
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_NET_BIND_SERVICE',
  'CAP_NET_RAW',
  'CAP_SETFCAP',
  'CAP_SETGID',
  'CAP_SETPCAP',
  'CAP_SETUID',
  'CAP_SYS_CHROOT',
];

/**
 * The OCI runtime config (`config.json`) of one instance: crun's own default (`crun spec`) with the image's command,
 * the instance's overlay as a writable root, its network namespace (the one `containerNetwork.ts` wired to the bridge,
 * or a new one with loopback only when no network is configured) and user data and SSH keys bound read-only under `/run/bc/`. No `linux.resources.devices`: crun
 * enforces it with an eBPF program, which is refused where the memlock limit is low; the container's `/dev` is a
 * tmpfs holding only crun's default nodes, and without CAP_MKNOD it makes no others.
 */
export function ociConfig(config: CrunRuntimeConfig, inputs: BundleInputs): Record<string, unknown> {
  const { id, bundle, image, flavor } = inputs;
  const bind = (source: string, destination: string) => ({
    destination,
    type: 'bind',
    source: `${bundle}/${source}`,
    options: ['bind', 'ro', 'nosuid', 'nodev'],
  });
  const resources =
    config.limits === 'flavor' && flavor
      ? { memory: { limit: flavor.memoryMiB * 1024 * 1024 }, cpu: { quota: flavor.vcpus * 100_000, period: 100_000 } }
      : undefined;
  return {
    ociVersion: '1.0.0',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: image.args,
      env: image.env,
      cwd: '/',
      capabilities: { bounding: capabilities, effective: capabilities, permitted: capabilities },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 }],
      noNewPrivileges: true,
    },
    root: { path: `${bundle}/${BundleFiles.rootfs}`, readonly: false },
    hostname: id,
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'] },
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'] },
      { destination: '/run', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=755'] },
      ...(inputs.hasUserData ? [bind(BundleFiles.userData, UserDataPath)] : []),
      ...(inputs.hasSshKeys ? [bind(BundleFiles.sshKeys, SshKeysPath)] : []),
    ],
    linux: {
      ...(config.cgroupManager === 'disabled' ? {} : { cgroupsPath: config.cgroupManager === 'systemd' ? `system.slice:bc-crun:${id}` : `/bc-crun/${id}` }),
      ...(resources ? { resources } : {}),
      namespaces: [
        { type: 'pid' },
        inputs.netnsPath ? { type: 'network', path: inputs.netnsPath } : { type: 'network' },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
        { type: 'cgroup' },
      ],
      maskedPaths: [
        '/proc/acpi',
        '/proc/asound',
        '/proc/kcore',
        '/proc/keys',
        '/proc/latency_stats',
        '/proc/timer_list',
        '/proc/timer_stats',
        '/proc/sched_debug',
        '/sys/firmware',
        '/proc/scsi',
      ],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
    },
  };
}
