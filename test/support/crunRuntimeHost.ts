import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPluginsFolder, type RunningPlugins } from '../../daemon/bcx/pluginsFolder.ts';
import { installCrunRuntimePlugin } from '../../scripts/bcx/crunRuntimePlugin.ts';
import { log } from './agentBackbone.ts';
import { runOnUnifiedCgroupHost, unifiedCgroupNode } from './unifiedCgroupHost.ts';

/** A busybox root filesystem: the local image the runtime's config names (no registry). */
function busyboxRootfs(dir: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(dir, 'bin/busybox'));
  chmodSync(join(dir, 'bin/busybox'), 0o755);
  for (const applet of ['sh', 'sleep', 'cat', 'echo', 'ls', 'mkdir', 'httpd', 'hostname']) symlinkSync('busybox', join(dir, 'bin', applet));
  for (const empty of ['proc', 'sys', 'dev', 'run', 'tmp', 'etc']) mkdirSync(join(dir, empty));
  return dir;
}

// pid 1 of its namespace: sh ignores SIGTERM unless it traps it, so these images stop gracefully on one.
const idle = 'trap "exit 0" TERM; while :; do sleep 1; done';

/**
 * The project's crun runtime (`plugins/crun-runtime/`) as a host runs it: installed by `installCrunRuntimePlugin`
 * (what `npm run plugin:crun-runtime` does), privileged, run by node as on a unified-cgroup host
 * (`unifiedCgroupHost.ts`), with a busybox image, crun's state and a bridge of its own on `10.213.<subnet>.0/24`.
 * Images: `busybox:plain` idles, `busybox:slow` is answered 2.5 s after its start, `busybox:error` exits at once,
 * `busybox:web` serves `/www` (its hostname in `index.html`) with busybox's httpd on port 80.
 */
export async function startCrunRuntimeHost(
  subnet: number,
): Promise<{ running: RunningPlugins; rootfs: string; program: string; crun(...args: string[]): string } & AsyncDisposable> {
  const root = mkdtempSync('/var/tmp/bc-crun-');
  const rootfs = busyboxRootfs(join(root, 'images/busybox'));
  const crunRoot = join(root, 'crun');
  const network = { bridge: `bcct${process.pid % 10_000}x${subnet}`, subnet: `10.213.${subnet}.0/24` };
  const config = {
    crunRoot,
    cgroupManager: 'cgroupfs',
    // The unified hierarchy here has no memory or cpu controller (they are bound to v1): nothing to put limits on.
    limits: 'none',
    stopTimeoutMs: 5_000,
    network,
    images: {
      'busybox:plain': { rootfs, args: ['/bin/sh', '-c', idle] },
      'busybox:slow': { rootfs, args: ['/bin/sh', '-c', idle], settleMs: 2_500 },
      'busybox:error': { rootfs, args: ['/bin/sh', '-c', 'echo the image does not boot >&2; exit 3'] },
      'busybox:web': { rootfs, args: ['/bin/sh', '-c', `mkdir -p /www && hostname > /www/index.html && httpd -p 80 -h /www && ${idle}`] },
    },
  };
  writeFileSync(join(root, 'config.json'), JSON.stringify(config));
  const pluginsFolder = join(root, 'plugins.d');
  await installCrunRuntimePlugin(pluginsFolder, { configPath: join(root, 'config.json'), interpreter: unifiedCgroupNode(join(root, 'unified-cgroup-node')) });
  const running = await startPluginsFolder(pluginsFolder, { stateRoot: join(root, 'state'), privileged: new Set(['crun']), log });
  const crun = (...args: string[]) => runOnUnifiedCgroupHost(['crun', '--root', crunRoot, '--cgroup-manager=cgroupfs', ...args]);
  return {
    running,
    rootfs,
    program: join(pluginsFolder, 'crun/plugin.mjs'),
    crun,
    [Symbol.asyncDispose]: async () => {
      await running.stop();
      for (const { id } of (JSON.parse(crun('list', '--format', 'json') || '[]') as { id: string }[] | null) ?? []) crun('delete', '--force', id);
      // crun removes each container's cgroup; their parent is the runtime's, left for the next container.
      runOnUnifiedCgroupHost(['sh', '-c', 'rmdir /sys/fs/cgroup/bc-crun 2>/dev/null || true']);
      execFileSync('ip', ['link', 'del', network.bridge], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The pid of the process running `program` (the plugin, to kill it mid-apply). */
export function pidRunning(program: string): number {
  const pid = readdirSync('/proc').find((entry) => {
    try {
      return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(program);
    } catch {
      return false;
    }
  });
  if (!pid) throw new Error(`no process runs ${program}`);
  return Number(pid);
}
