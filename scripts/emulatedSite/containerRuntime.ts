import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installCrunRuntimePlugin } from '../bcx/crunRuntimePlugin.ts';
import { runTool } from './hostTools.ts';
import { installBinaryWithLibraries } from './nodeRuntime.ts';

/** Where the host image keeps the runtime's pieces; `rootfs/image-init.sh` names the same paths. */
export const CRUN_PLUGINS_DIR = 'opt/bcd/plugins';
const CONFIG = '/etc/bc/crun-runtime.json';
const BUSYBOX_IMAGE = '/var/lib/bc/images/busybox';

/** Kernel modules the runtime needs on the host: the containers' overlay roots. */
export const containerModules = ['overlay'] as const;

/**
 * The crun runtime on the emulated site's host image (issue 36): `/usr/bin/crun` with its libraries (from the build
 * host, as node is), the runtime plugin bundled and pinned in `/opt/bcd/plugins/crun` (bcd node runs it privileged),
 * its config, and one image, `busybox`: a busybox rootfs whose pid 1 idles (and stops on SIGTERM). No network is
 * configured (busybox's `ip` has no netns or veth): containers have loopback only. The host is cgroup v2 unified
 * (init mounts cgroup2 at `/sys/fs/cgroup`), so the flavor's limits are put on each container.
 */
export async function installContainerRuntime(rootfs: string, busybox: string): Promise<{ crunFiles: string[]; pluginSha256: string }> {
  const crunFiles = installBinaryWithLibraries('/usr/bin/crun', rootfs, 'crun');
  const image = join(rootfs, BUSYBOX_IMAGE);
  mkdirSync(join(image, 'bin'), { recursive: true });
  copyFileSync(busybox, join(image, 'bin/busybox'));
  chmodSync(join(image, 'bin/busybox'), 0o755);
  for (const applet of runTool(busybox, ['--list']).toString('utf8').split('\n').filter(Boolean).sort())
    if (applet !== 'busybox') symlinkSync('busybox', join(image, 'bin', applet));
  for (const dir of ['proc', 'sys', 'dev', 'run', 'tmp', 'etc', 'root']) mkdirSync(join(image, dir), { recursive: true });
  const config = {
    images: { busybox: { rootfs: BUSYBOX_IMAGE, args: ['/bin/sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'] } },
    cgroupManager: 'cgroupfs',
    limits: 'flavor',
  };
  mkdirSync(join(rootfs, 'etc/bc'), { recursive: true });
  writeFileSync(join(rootfs, CONFIG), `${JSON.stringify(config, null, 2)}\n`);
  const { sha256 } = await installCrunRuntimePlugin(join(rootfs, CRUN_PLUGINS_DIR), { configPath: CONFIG });
  return { crunFiles, pluginSha256: sha256 };
}
