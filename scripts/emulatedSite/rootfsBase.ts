import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleBcd } from './bcdBundle.ts';
import { extractDeb, fetchDeb, resolveMetaPackage, type CachedDeb } from './debianPackages.ts';
import { runTool } from './hostTools.ts';
import { installModules } from './kernelModules.ts';
import { installBinaryWithLibraries } from './nodeRuntime.ts';

export const rootfsSources = new URL('./rootfs/', import.meta.url);

/** Modules a virtio machine needs before anything else: disks, network, entropy, and the ACPI power button. */
export const virtioModules = ['virtio_pci', 'virtio_net', 'virtio_blk', 'virtio_rng', 'button', 'evdev'] as const;

export interface KernelPackages {
  kernel: CachedDeb;
  busybox: CachedDeb;
  /** Where the kernel package was unpacked (`boot/vmlinuz-*`, `lib/modules/*`). */
  kernelRoot: string;
  release: string;
}

/**
 * The Debian packages every emulated-site boot is made of: the cloud kernel (`BC_KERNEL_PACKAGE`, else what
 * `linux-image-cloud-amd64` depends on) and busybox-static, downloaded once into `cacheDir` and unpacked under `work`.
 */
export function fetchBasePackages(cacheDir: string, work: string, env: NodeJS.ProcessEnv = process.env): Omit<KernelPackages, 'release'> {
  const kernelName = env.BC_KERNEL_PACKAGE || resolveMetaPackage('linux-image-cloud-amd64', cacheDir, /^linux-image-[\d.]+-\d+-cloud-amd64$/);
  const kernel = fetchDeb(kernelName, cacheDir);
  const busybox = fetchDeb('busybox-static', cacheDir);
  const kernelRoot = join(work, 'kernel');
  extractDeb(kernel, kernelRoot);
  extractDeb(busybox, join(work, 'busybox'));
  return { kernel, busybox, kernelRoot };
}

/** Copies one of `rootfs/`'s scripts into an image as an executable, whatever mode the checkout gave it. */
export function installScript(name: string, to: string): void {
  copyFileSync(new URL(name, rootfsSources), to);
  chmodSync(to, 0o755);
}

/** What went into a root filesystem, for the build manifest. */
export interface RootfsContents {
  release: string;
  modules: string[];
  nodeFiles: string[];
  bcdFiles: string[];
}

/**
 * A minimal Linux userland in `rootfs`: busybox with its applets as links in /bin, the virtio modules (depmod'd),
 * `/usr/bin/node` with its libraries, and the bundled `bcd` in /opt/bcd. The caller adds its own init (and any modules
 * it needs beyond the virtio ones, `extraModules`).
 */
export async function buildBaseRootfs(rootfs: string, work: string, kernelRoot: string, extraModules: readonly string[] = []): Promise<RootfsContents> {
  for (const dir of ['bin', 'dev', 'etc/acpi', 'opt/bcd', 'proc', 'root', 'run', 'sys', 'tmp', 'usr/bin', 'var'])
    mkdirSync(join(rootfs, dir), { recursive: true });
  const busybox = join(work, 'busybox/bin/busybox');
  copyFileSync(busybox, join(rootfs, 'bin/busybox'));
  for (const applet of runTool(busybox, ['--list']).toString('utf8').split('\n').filter(Boolean).sort()) {
    if (applet !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', applet));
  }
  writeFileSync(join(rootfs, 'etc/hosts'), '127.0.0.1 localhost\n');
  writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\n');
  installScript('udhcpc.script', join(rootfs, 'etc/udhcpc.script'));
  writeFileSync(join(rootfs, 'etc/acpid.conf'), 'PWRF PWRF\n');
  installScript('acpi-power-button.sh', join(rootfs, 'etc/acpi/PWRF'));
  const { release, modules } = installModules(kernelRoot, rootfs, [...virtioModules, ...extraModules]);
  const nodeFiles = installBinaryWithLibraries('/usr/bin/node', rootfs, 'node');
  const { files: bcdFiles } = await bundleBcd(join(rootfs, 'opt/bcd'));
  return { release, modules, nodeFiles, bcdFiles };
}
