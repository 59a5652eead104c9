import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';

/**
 * This test machine mounts cgroups hybrid (v1 controllers, v2 at `/sys/fs/cgroup/unified`), which crun refuses; a
 * Debian 12 host mounts the unified (v2) hierarchy at `/sys/fs/cgroup`. These run a program as on such a host: in a
 * private mount namespace (`unshare -m`, propagation private, so the host's mounts are untouched) whose
 * `/sys/fs/cgroup` is the cgroup2 hierarchy. Only that path differs; the program and crun are the real ones.
 */
const remount = 'umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup';

/** Writes an interpreter script at `path` that runs `node <program> <args…>` so (a pin's `interpreter`). */
export function unifiedCgroupNode(path: string): string {
  writeFileSync(path, `#!/bin/sh\nexec unshare -m sh -c '${remount} && exec /usr/bin/node "$@"' unified-cgroup-node "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Runs `argv` so, returning its stdout (throws with its stderr on a non-zero exit). */
export function runOnUnifiedCgroupHost(argv: string[]): string {
  return execFileSync('unshare', ['-m', 'sh', '-c', `${remount} && exec "$@"`, 'unified-cgroup', ...argv], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
