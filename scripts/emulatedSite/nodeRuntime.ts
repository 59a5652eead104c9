import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BuildError } from './buildError.ts';
import { runTool } from './hostTools.ts';

/** The shared libraries `ldd` names for a binary (the loader included), as absolute paths. */
export function sharedLibrariesOf(binary: string): string[] {
  const out = runTool('ldd', [binary]).toString('utf8');
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    const resolved = /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S+)\s+\(/.exec(line)?.[1];
    if (resolved) libs.add(resolved);
  }
  if (libs.size === 0) throw new BuildError('BUILD_FAILED', `ldd found no libraries for ${binary}: is it statically linked?`);
  return [...libs].sort();
}

/**
 * Copies a dynamically linked binary to `/usr/bin/<name>` in `rootfs` with the libraries it links at the paths the
 * loader looks for them (symlinks resolved to their files). Returns what was copied, for the build manifest.
 */
export function installBinaryWithLibraries(binary: string, rootfs: string, name: string): string[] {
  const libs = sharedLibrariesOf(binary);
  mkdirSync(join(rootfs, 'usr/bin'), { recursive: true });
  copyFileSync(binary, join(rootfs, 'usr/bin', name));
  for (const lib of libs) {
    mkdirSync(dirname(join(rootfs, lib)), { recursive: true });
    copyFileSync(lib, join(rootfs, lib));
  }
  return [binary, ...libs];
}
