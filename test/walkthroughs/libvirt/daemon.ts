/**
 * The real libvirt daemon for the libvirt provider's tests. This machine (a container, no systemd) has no socket
 * activation, so the daemons Debian bookworm's libvirt-daemon-system ships are started by hand as root: `virtlogd`
 * (QEMU's console logs go through it) and the monolithic `libvirtd`, both with `--daemon`; `qemu:///session` is no way
 * round it for root, whose session URI is the system socket. A daemon already running is used as it is and left so.
 */
import { execFile } from 'node:child_process';
import { chmod, chown, readFile, stat } from 'node:fs/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);
export const SYSTEM_URI = 'qemu:///system';
const INSTALL = 'apt-get install -y --no-install-recommends libvirt-daemon-system libvirt-clients (.ci/run installs them when missing)';

async function installed(program: string): Promise<boolean> {
  return exec('sh', ['-c', `command -v ${program}`]).then(
    () => true,
    () => false,
  );
}

const connects = (): Promise<boolean> =>
  exec('virsh', ['--connect', SYSTEM_URI, 'version'], { timeout: 30_000 }).then(
    () => true,
    () => false,
  );

export interface LibvirtDaemon {
  /** Stops the daemons this call started (by the pids they wrote), none that were running before. */
  stop(): Promise<void>;
}

/**
 * Gives /dev/kvm the owner Debian's udev rule gives it on a real host (group kvm, mode 0660). Without udev it stays
 * root-only, and libvirtd then finds its cached QEMU capabilities (probed with KVM present) invalid for the
 * unprivileged `libvirt-qemu` user on every domain definition, probes QEMU again and takes about 40 s per `define`.
 * The domains stay `type='qemu'` (TCG) either way.
 */
async function kvmDeviceAsUdevLeavesIt(): Promise<void> {
  const device = await stat('/dev/kvm').catch(() => null);
  if (device === null) return;
  const kvmGid = Number((await exec('getent', ['group', 'kvm']).catch(() => ({ stdout: '' }))).stdout.split(':')[2]);
  if (!Number.isInteger(kvmGid)) return;
  if (device.gid !== kvmGid) await chown('/dev/kvm', device.uid, kvmGid);
  if ((device.mode & 0o060) !== 0o060) await chmod('/dev/kvm', (device.mode & 0o777) | 0o060);
}

/** Makes `qemu:///system` answer, starting the daemons when they are not running; throws saying what is missing. */
export async function ensureLibvirtDaemon(): Promise<LibvirtDaemon> {
  for (const program of ['virsh', 'libvirtd', 'virtlogd', 'qemu-system-x86_64']) {
    if (!(await installed(program))) throw new Error(`libvirt is missing on this machine: no ${program}. Install it: ${INSTALL}`);
  }
  await kvmDeviceAsUdevLeavesIt();
  if (await connects()) return { stop: async () => undefined };
  const started: string[] = [];
  for (const [daemon, pidFile] of [
    ['virtlogd', '/run/virtlogd.pid'],
    ['libvirtd', '/run/libvirtd.pid'],
  ] as const) {
    const running = await exec('pgrep', ['-x', daemon]).then(
      () => true,
      () => false,
    );
    if (running) continue;
    await exec(daemon, ['--daemon']);
    started.push(pidFile);
  }
  const deadline = Date.now() + 60_000;
  while (!(await connects())) {
    if (Date.now() > deadline) throw new Error(`libvirtd started but ${SYSTEM_URI} does not answer after 60 s; see /var/log/libvirt/`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    async stop() {
      for (const pidFile of started.reverse()) {
        const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
        if (Number.isInteger(pid) && pid > 1) process.kill(pid, 'SIGTERM');
      }
    },
  };
}
