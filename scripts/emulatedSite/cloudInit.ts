import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dependencyClosure } from './debianClosure.ts';
import { extractDeb, type CachedDeb } from './debianPackages.ts';
import { runTool } from './hostTools.ts';
import { rootfsSources } from './rootfsBase.ts';

/**
 * Packages cloud-init's dependencies name that the image does without. They serve package management and maintainer
 * scripts (dpkg, debconf, install-info, init-system-helpers' service registration, usrmerge's /usr conversion, which
 * brings perl), and this build unpacks package contents without running any of those: there is no package database.
 */
export const notInstalled: ReadonlySet<string> = new Set([
  'dpkg',
  'debconf',
  'debconf-2.0',
  'install-info',
  'init-system-helpers',
  'usrmerge',
  'usr-is-merged',
]);

/**
 * What is installed: cloud-init, and the two packages of Debian's base system it runs without declaring them
 * (Essential or `required`, which no package needs to name): util-linux, whose `blkid -t LABEL=cidata` finds the
 * seed, and mount, whose `mount -t auto` mounts it (busybox has neither form).
 */
export const cloudInitPackages = ['cloud-init', 'util-linux', 'mount'] as const;

/** What a slim Debian image leaves out (dpkg's `path-exclude` in Debian's container images): docs, man pages, translations. */
const excluded = ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/lintian', 'usr/share/bug'];

/** The (Debian) kernel modules NoCloud's seed needs: its `cidata` partition is vfat (cp437 short names; the kernel's default iocharset is ascii). */
export const cidataModules = ['vfat', 'nls_cp437', 'nls_ascii', 'nls_utf8'] as const;

/**
 * Byte-compiles the image's Python with the image's own interpreter (through the image's loader, so the host's Python
 * plays no part), as Debian's `py3compile` does in python3's postinst. `checked-hash` pycs hold the source's hash,
 * not its mtime, so they are reproducible and stay valid when the tree's times are pinned to SOURCE_DATE_EPOCH.
 */
function byteCompile(rootfs: string): void {
  const libs = ['lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu'].map((dir) => join(rootfs, dir)).join(':');
  const python = [join(rootfs, 'lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'), '--library-path', libs, join(rootfs, 'usr/bin/python3')];
  runTool(
    python[0]!,
    [
      ...python.slice(1),
      '-m',
      'compileall',
      '-q',
      '--invalidation-mode',
      'checked-hash',
      '-s',
      rootfs,
      '-p',
      '/',
      '-x',
      '/(test|tests|idle_test|lib2to3/tests)/',
      join(rootfs, 'usr/lib/python3.11'),
      join(rootfs, 'usr/lib/python3/dist-packages'),
    ],
    // PYTHONDONTWRITEBYTECODE: compileall's own imports would otherwise leave pycs naming this build's path behind.
    { env: { PATH: '/usr/bin:/bin', PYTHONHOME: join(rootfs, 'usr'), PYTHONDONTWRITEBYTECODE: '1' } },
  );
}

/**
 * Debian's `cloud-init` package and everything it depends on (no recommends), unpacked into `rootfs` over the busybox
 * userland, without docs; its configuration for this image (`rootfs/cloud-init.cfg`) in /etc/cloud/cloud.cfg.d.
 * Returns the packages, for the build manifest.
 */
export function installCloudInit(rootfs: string, cacheDir: string): CachedDeb[] {
  const debs = dependencyClosure(cloudInitPackages, cacheDir, notInstalled);
  for (const deb of debs) extractDeb(deb, rootfs);
  for (const dir of excluded) rmSync(join(rootfs, dir), { recursive: true, force: true });
  mkdirSync(join(rootfs, 'etc/cloud/cloud.cfg.d'), { recursive: true });
  copyFileSync(new URL('cloud-init.cfg', rootfsSources), join(rootfs, 'etc/cloud/cloud.cfg.d/90_better_compute.cfg'));
  mkdirSync(join(rootfs, 'var/log'), { recursive: true });
  mkdirSync(join(rootfs, 'etc/default'), { recursive: true });
  writeFileSync(join(rootfs, 'etc/default/locale'), 'LANG=C.UTF-8\n');
  byteCompile(rootfs);
  return debs;
}
