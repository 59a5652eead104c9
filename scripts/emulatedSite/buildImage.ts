import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliBuildDirs, inWorkDir, repoRoot, writeManifest } from './buildOutput.ts';
import { assembleDisk, folderMiB, makeExt4, makeSyslinuxFat } from './diskImage.ts';
import { requireTools } from './hostTools.ts';
import { installModules } from './kernelModules.ts';
import { normalizeTree, sha256OfFile, sourceDateEpoch, writeInitramfs } from './reproducibleTree.ts';
import { buildBaseRootfs, fetchBasePackages, installScript } from './rootfsBase.ts';
import { cidataModules, installCloudInit } from './cloudInit.ts';
import { ramdiskTools } from './buildRamdisk.ts';
import { containerModules, installContainerRuntime } from './containerRuntime.ts';
import { SEED_PARTITION_TYPE } from '../../schemas/agent/nodeSeed.ts';

export interface ImageBuild {
  image: string;
  manifest: string;
  sha256: string;
  sizeBytes: number;
}

/** Fixed identities, so the same inputs give the same bytes (and nothing here names a machine). */
const ROOT_UUID = 'bc0de5e1-0000-4000-8000-000000000001';
const BOOT_VOLUME_ID = 'bc0de001';
const DISK_ID = '0xbc0de001';

const syslinuxCfg = `SERIAL 0 115200
DEFAULT bc
PROMPT 0
TIMEOUT 0
LABEL bc
  KERNEL /vmlinuz
  INITRD /initrd.img
  APPEND console=ttyS0 quiet
`;

/**
 * `npm run build:image`: the raw disk image the built-in deploy writes. MBR with three partitions: a FAT boot
 * partition (syslinux, the Debian cloud kernel, an early initramfs that loads virtio_blk and mounts the root), an
 * ext4 root (`mke2fs -d`, never mounted here) holding busybox, node and the bundled `bcd`, whose /sbin/init starts
 * `bcd node` with the crun runtime plugin (`containerRuntime.ts`), and a 1 MiB `bc-seed` partition (type 0xda) the deploy fills with the node's join seed.
 */
export async function buildImage(outDir: string, cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<ImageBuild> {
  requireTools([...ramdiskTools, 'mke2fs', 'mkfs.vfat', 'syslinux', 'mcopy', 'sfdisk', 'du', 'crun']);
  const epoch = sourceDateEpoch(repoRoot, env);
  return inWorkDir(outDir, async (work) => {
    const packages = fetchBasePackages(cacheDir, work, env);
    const rootfs = join(work, 'rootfs');
    const contents = await buildBaseRootfs(rootfs, work, packages.kernelRoot, [...cidataModules, ...containerModules]);
    const cloudInit = installCloudInit(rootfs, cacheDir);
    const containers = await installContainerRuntime(rootfs, join(work, 'busybox/bin/busybox'));
    mkdirSync(join(rootfs, 'sbin'), { recursive: true });
    mkdirSync(join(rootfs, 'var/lib/bcd'), { recursive: true });
    installScript('image-init.sh', join(rootfs, 'sbin/init'));
    writeFileSync(join(rootfs, 'etc/bc-image-release'), `better-compute-emulated-host kernel=${contents.release}\n`);

    const early = join(work, 'early');
    for (const dir of ['bin', 'dev', 'proc', 'sys']) mkdirSync(join(early, dir), { recursive: true });
    copyFileSync(join(work, 'busybox/bin/busybox'), join(early, 'bin/busybox'));
    for (const applet of ['sh', 'mount', 'umount', 'grep', 'modprobe', 'findfs', 'mkdir', 'sleep', 'switch_root', 'echo'])
      symlinkSync('busybox', join(early, 'bin', applet));
    installModules(packages.kernelRoot, early, ['virtio_pci', 'virtio_blk']);
    installScript('image-boot-init.sh', join(early, 'init'));

    const boot = join(work, 'boot');
    mkdirSync(boot);
    copyFileSync(join(packages.kernelRoot, 'boot', `vmlinuz-${contents.release}`), join(boot, 'vmlinuz'));
    writeInitramfs(early, join(boot, 'initrd.img'), epoch);
    writeFileSync(join(boot, 'syslinux.cfg'), syslinuxCfg);
    normalizeTree(boot, epoch);
    normalizeTree(rootfs, epoch);

    const bootFat = join(work, 'boot.fat');
    makeSyslinuxFat(
      bootFat,
      32,
      'BCBOOT',
      BOOT_VOLUME_ID,
      ['vmlinuz', 'initrd.img', 'syslinux.cfg'].map((f) => join(boot, f)),
      epoch,
    );
    const rootMiB = Math.ceil(folderMiB(rootfs) * 1.25) + 32;
    const rootExt4 = join(work, 'root.ext4');
    makeExt4(rootExt4, rootfs, rootMiB, 'bc-root', ROOT_UUID, epoch);

    const image = join(outDir, 'disk.raw');
    assembleDisk(
      image,
      [
        { file: bootFat, sizeMiB: 32, type: 'c', bootable: true },
        { file: rootExt4, sizeMiB: rootMiB, type: '83' },
        { sizeMiB: 1, type: SEED_PARTITION_TYPE.toString(16) },
      ],
      DISK_ID,
      '/usr/lib/syslinux/mbr/mbr.bin',
    );
    const sha256 = await sha256OfFile(image);
    const sizeBytes = (1 + 32 + rootMiB + 1) * (1 << 20);
    const manifest = writeManifest(outDir, {
      sourceDateEpoch: epoch,
      kernelRelease: contents.release,
      packages: [packages.kernel, packages.busybox].map((d) => ({ name: d.name, version: d.version })),
      cloudInit: cloudInit.map((d) => ({ name: d.name, version: d.version })),
      node: process.version,
      crun: { files: containers.crunFiles, plugin: `crun sha256 ${containers.pluginSha256}` },
      partitions: { boot: '32 MiB FAT (syslinux)', root: `${rootMiB} MiB ext4 bc-root`, seed: '1 MiB type 0xda' },
      sha256,
      sizeBytes,
    });
    return { image, manifest, sha256, sizeBytes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { outDir, cacheDir } = cliBuildDirs('image');
  const built = await buildImage(outDir, cacheDir);
  process.stdout.write(`${built.sha256}  ${built.image}\n`);
}
