import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BcxOperationError } from '../sdk/bcx/index.ts';
import { stderrOf } from './crunCli.ts';
import { BundleFiles } from './ociBundle.ts';

const exec = promisify(execFile);

const mounted = (target: string): boolean =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === target);

/**
 * An instance's root: an overlay of the image's rootfs (shared, never written) under the instance's own `upper`
 * folder, so what the container writes survives a stop and start and goes with `remove`, and the image serves many.
 */
export async function mountRoot(bundle: string, imageRootfs: string): Promise<void> {
  const target = join(bundle, BundleFiles.rootfs);
  if (mounted(target)) return;
  for (const dir of [BundleFiles.rootfs, BundleFiles.upper, BundleFiles.work]) mkdirSync(join(bundle, dir), { recursive: true, mode: 0o755 });
  const options = `lowerdir=${imageRootfs},upperdir=${join(bundle, BundleFiles.upper)},workdir=${join(bundle, BundleFiles.work)}`;
  try {
    await exec('mount', ['-t', 'overlay', 'overlay', '-o', options, target]);
  } catch (err) {
    throw new BcxOperationError('ROOT_MOUNT_FAILED', `overlay on ${target}: ${stderrOf(err) || (err as Error).message}`);
  }
}

/** Unmounts the instance's root if this plugin's mount namespace has it mounted (a stopped instance holds no mount). */
export async function unmountRoot(bundle: string): Promise<void> {
  const target = join(bundle, BundleFiles.rootfs);
  if (!mounted(target)) return;
  try {
    await exec('umount', [target]);
  } catch (err) {
    throw new BcxOperationError('ROOT_MOUNT_FAILED', `umount ${target}: ${stderrOf(err) || (err as Error).message}`);
  }
}
