import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { installCrunRuntimePlugin } from '../../scripts/bcx/crunRuntimePlugin.ts';
import { runtimeConformance } from '../support/runtimeConformance.ts';
import { runOnUnifiedCgroupHost, unifiedCgroupNode } from '../support/unifiedCgroupHost.ts';
import { log } from './harness.ts';

/** A busybox root filesystem: the local image the runtime's config names (no registry). */
function busyboxRootfs(dir: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(dir, 'bin/busybox'));
  chmodSync(join(dir, 'bin/busybox'), 0o755);
  for (const applet of ['sh', 'sleep', 'cat', 'echo', 'ls']) symlinkSync('busybox', join(dir, 'bin', applet));
  for (const empty of ['proc', 'sys', 'dev', 'run', 'tmp', 'etc']) mkdirSync(join(dir, empty));
  return dir;
}

// The project's crun runtime (plugins/crun-runtime), bundled and pinned as `bcd node` runs it: privileged, as root.
runtimeConformance('crun', async () => {
  const root = mkdtempSync('/var/tmp/bc-crun-');
  const rootfs = busyboxRootfs(join(root, 'images/busybox'));
  const crunRoot = join(root, 'crun');
  // pid 1 of its namespace: sh ignores SIGTERM unless it traps it, so the plain image stops gracefully on one.
  const serve = ['/bin/sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'];
  const config = {
    crunRoot,
    cgroupManager: 'cgroupfs',
    // The unified hierarchy here has no memory or cpu controller (they are bound to v1): nothing to put limits on.
    limits: 'none',
    stopTimeoutMs: 5_000,
    images: {
      'busybox:plain': { rootfs, args: serve },
      'busybox:slow': { rootfs, args: serve, settleMs: 2_500 },
      'busybox:error': { rootfs, args: ['/bin/sh', '-c', 'echo the image does not boot >&2; exit 3'] },
    },
  };
  writeFileSync(join(root, 'config.json'), JSON.stringify(config));
  // Installed as an operator would (npm run plugin:crun-runtime), run by node as on a unified-cgroup host.
  const pluginsFolder = join(root, 'plugins.d');
  await installCrunRuntimePlugin(pluginsFolder, { configPath: join(root, 'config.json'), interpreter: unifiedCgroupNode(join(root, 'unified-cgroup-node')) });
  const running = await startPluginsFolder(pluginsFolder, { stateRoot: join(root, 'state'), privileged: new Set(['crun']), log });
  const program = join(pluginsFolder, 'crun/plugin.mjs');

  const crun = (...args: string[]) => runOnUnifiedCgroupHost(['crun', '--root', crunRoot, '--cgroup-manager=cgroupfs', ...args]);
  const state = (id: string): { status: string; pid: number } | null => {
    try {
      return JSON.parse(crun('state', id)) as { status: string; pid: number };
    } catch {
      return null;
    }
  };
  return {
    runtime: 'crun',
    running,
    images: { plain: 'busybox:plain', error: 'busybox:error', slow: 'busybox:slow' },
    errorMessage: /exited within 500 ms of its start: the image does not boot/,
    addresses: [],
    warmStart: true,
    workload: async (id) => {
      const s = state(id);
      return s?.status === 'running' ? String(s.pid) : null;
    },
    // A process inside the container reads it (crun exec), not the plugin's copy in the bundle.
    userDataInside: async (id) => {
      try {
        return crun('exec', id, '/bin/cat', '/run/bc/user-data');
      } catch {
        return null;
      }
    },
    killWorkload: async (id) => void process.kill(state(id)!.pid, 'SIGKILL'),
    pluginPid: async () =>
      Number(
        readdirSync('/proc').find((pid) => {
          try {
            return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(program);
          } catch {
            return false;
          }
        }),
      ),
    [Symbol.asyncDispose]: async () => {
      for (const id of (JSON.parse(crun('list', '--format', 'json') || '[]') as { id: string }[] | null) ?? []) crun('delete', '--force', id.id);
      // crun removes each container's cgroup; their parent is the runtime's, left for the next container.
      runOnUnifiedCgroupHost(['sh', '-c', 'rmdir /sys/fs/cgroup/bc-crun 2>/dev/null || true']);
      rmSync(root, { recursive: true, force: true });
    },
  };
});
