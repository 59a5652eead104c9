import { spawnSync } from 'node:child_process';
import { BuildError } from './buildError.ts';

export interface ToolRun {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: Buffer | string;
}

/**
 * Runs a host tool to completion and returns its stdout. A missing tool is `TOOL_MISSING` (naming the Debian
 * package that brings it, when known), a non-zero exit `BUILD_FAILED` with the tool's stderr.
 */
export function runTool(command: string, args: readonly string[], run: ToolRun = {}): Buffer {
  const result = spawnSync(command, args, {
    cwd: run.cwd,
    env: run.env ?? process.env,
    input: run.input,
    maxBuffer: 1 << 30,
  });
  if (result.error) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT') throw missingTool(command, result.error);
    throw new BuildError('BUILD_FAILED', `${command} could not run: ${result.error.message}`, { cause: result.error });
  }
  if (result.status !== 0) {
    const stderr = result.stderr.toString('utf8').trim().split('\n').slice(-5).join('\n');
    throw new BuildError('BUILD_FAILED', `${command} ${args.join(' ')} exited ${result.status ?? result.signal}: ${stderr}`);
  }
  return result.stdout;
}

/** The Debian package that provides each tool the emulated site runs, for error messages that say what to install. */
export const toolPackages: Readonly<Record<string, string>> = {
  'apt-get': 'apt',
  'apt-cache': 'apt',
  'dpkg-deb': 'dpkg',
  depmod: 'kmod',
  cpio: 'cpio',
  gzip: 'gzip',
  ldd: 'libc-bin',
  mke2fs: 'e2fsprogs',
  sfdisk: 'fdisk',
  'mkfs.fat': 'dosfstools',
  mcopy: 'mtools',
  extlinux: 'extlinux',
  'qemu-system-x86_64': 'qemu-system-x86',
  'qemu-img': 'qemu-utils',
  dnsmasq: 'dnsmasq-base',
  ip: 'iproute2',
  crun: 'crun',
};

export function missingTool(command: string, cause?: unknown): BuildError {
  const pkg = toolPackages[command];
  return new BuildError('TOOL_MISSING', `${command} is not installed${pkg ? ` (Debian package ${pkg})` : ''}`, { cause });
}

/** Fails with `TOOL_MISSING` for the first of `commands` not on PATH (or not at its absolute path). */
export function requireTools(commands: readonly string[]): void {
  for (const command of commands) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command]).status === 0;
    if (!found) throw missingTool(command);
  }
}
