import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliBuildDirs, inWorkDir, repoRoot, writeManifest } from './buildOutput.ts';
import { requireTools, runTool } from './hostTools.ts';
import { installBinaryWithLibraries } from './nodeRuntime.ts';
import { sha256OfFile, normalizeTree, sourceDateEpoch, writeInitramfs } from './reproducibleTree.ts';
import { buildBaseRootfs, fetchBasePackages, installScript } from './rootfsBase.ts';

export interface RamdiskBuild {
  kernel: string;
  initrd: string;
  manifest: string;
  sha256: { kernel: string; initrd: string };
}

export const ramdiskTools = ['apt-get', 'apt-cache', 'dpkg-deb', 'depmod', 'cpio', 'gzip', 'ldd', 'sfdisk', 'mkfs.fat', 'mcopy', 'blkdiscard'] as const;

/**
 * The host's fdisk, dosfstools and mtools binaries (`requiredPackages.txt`), and util-linux's `blkdiscard`, by the name
 * the ramdisk runs them under. busybox has a `blkdiscard` too, without `--zeroout` (the zero wipe's BLKZEROOUT):
 * util-linux's, in /usr/bin, comes first on the ramdisk's PATH.
 */
function seedToolsOf(): [binary: string, name: string][] {
  const path = (tool: string) => runTool('sh', ['-c', 'command -v "$1"', 'sh', tool]).toString('utf8').trim();
  return ['sfdisk', 'mkfs.fat', 'mcopy', 'blkdiscard'].map((tool) => [path(tool), tool]);
}

/**
 * mcopy converts short names through glibc's iconv to DOS codepage 850 ("Error converting to codepage 850" without it):
 * the module and glibc's module table go where the host's libc looks for them.
 */
function installCodepage850(rootfs: string): string[] {
  const gconv = '/usr/lib/x86_64-linux-gnu/gconv';
  const files = ['IBM850.so', 'gconv-modules', 'gconv-modules.cache', ...readdirSync(join(gconv, 'gconv-modules.d')).map((f) => `gconv-modules.d/${f}`)]
    .map((file) => join(gconv, file))
    .filter((file) => existsSync(file));
  for (const file of files) {
    mkdirSync(dirname(join(rootfs, file)), { recursive: true });
    copyFileSync(file, join(rootfs, file));
  }
  return files;
}

/**
 * `npm run build:ramdisk`: the kernel and initramfs a machine PXE-boots into `bcd ramdisk`. From Debian's cloud
 * kernel (virtio modules), busybox-static, this host's `/usr/bin/node` and the bundled `bcd`. The same inputs give
 * the same bytes: the manifest names every input with its version and digest.
 */
export async function buildRamdisk(outDir: string, cacheDir: string, env: NodeJS.ProcessEnv = process.env): Promise<RamdiskBuild> {
  requireTools(ramdiskTools);
  const epoch = sourceDateEpoch(repoRoot, env);
  return inWorkDir(outDir, async (work) => {
    const packages = fetchBasePackages(cacheDir, work, env);
    const rootfs = join(work, 'rootfs');
    const contents = await buildBaseRootfs(rootfs, work, packages.kernelRoot);
    installScript('ramdisk-init.sh', join(rootfs, 'init'));
    // What userdata.write adds the NoCloud cidata partition with (daemon/ramdisk/cidataPartition.ts), and the zero wipe's blkdiscard.
    const seedTools = [...seedToolsOf().flatMap(([binary, name]) => installBinaryWithLibraries(binary, rootfs, name)), ...installCodepage850(rootfs)];
    const kernel = join(outDir, 'vmlinuz');
    const initrd = join(outDir, 'initrd.img');
    copyFileSync(join(packages.kernelRoot, 'boot', `vmlinuz-${contents.release}`), kernel);
    writeInitramfs(rootfs, initrd, epoch);
    normalizeTree(outDir, epoch);
    const sha256 = { kernel: await sha256OfFile(kernel), initrd: await sha256OfFile(initrd) };
    const manifest = writeManifest(outDir, {
      sourceDateEpoch: epoch,
      kernelRelease: contents.release,
      packages: await Promise.all(
        [packages.kernel, packages.busybox].map(async (deb) => ({ name: deb.name, version: deb.version, sha256: await sha256OfFile(deb.file) })),
      ),
      modules: contents.modules,
      node: { version: process.version, files: contents.nodeFiles },
      seedTools,
      bcd: contents.bcdFiles,
      sha256,
    });
    return { kernel, initrd, manifest, sha256 };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { outDir, cacheDir } = cliBuildDirs('ramdisk');
  const built = await buildRamdisk(outDir, cacheDir);
  process.stdout.write(`${built.sha256.kernel}  ${built.kernel}\n${built.sha256.initrd}  ${built.initrd}\n`);
}
