import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeInstanceStatus } from '../../schemas/bcx/bcxProtocol.ts';
import { pidRunning, startCrunRuntimeHost } from '../support/crunRuntimeHost.ts';
import { runtimeConformance } from '../support/runtimeConformance.ts';

/** `crun state` of a container: null when crun has none. */
const stateOf = (crun: (...args: string[]) => string, id: string): { status: string; pid: number } | null => {
  try {
    return JSON.parse(crun('state', id)) as { status: string; pid: number };
  } catch {
    return null;
  }
};

// The project's crun runtime (plugins/crun-runtime) run by bcd node through the shared suite.
runtimeConformance('crun', async () => {
  const host = await startCrunRuntimeHost(7);
  return {
    runtime: 'crun',
    running: host.running,
    images: { plain: 'busybox:plain', error: 'busybox:error', slow: 'busybox:slow' },
    errorMessage: /exited within 500 ms of its start: the image does not boot/,
    addresses: [expect.stringMatching(/^10\.213\.7\.\d+$/) as string],
    warmStart: true,
    workload: async (id) => {
      const s = stateOf(host.crun, id);
      return s?.status === 'running' ? String(s.pid) : null;
    },
    // A process inside the container reads it (crun exec), not the plugin's copy in the bundle.
    userDataInside: async (id) => {
      try {
        return host.crun('exec', id, '/bin/cat', '/run/bc/user-data');
      } catch {
        return null;
      }
    },
    killWorkload: async (id) => void process.kill(stateOf(host.crun, id)!.pid, 'SIGKILL'),
    pluginPid: async () => pidRunning(host.program),
    // The suite stops the plugins first; stopping them again is a no-op.
    [Symbol.asyncDispose]: () => host[Symbol.asyncDispose](),
  };
});

describe('the crun runtime: what a container is beyond the contract', () => {
  let host: Awaited<ReturnType<typeof startCrunRuntimeHost>>;
  const invoke = (operation: string, ...args: unknown[]) => host.running.hosts.get('crun')!.invoke(operation, args);
  const spec = (desiredState: 'running' | 'stopped') => ({
    id: 'web-1',
    runtime: 'crun',
    flavor: { name: 'small', vcpus: 1, memoryMiB: 256, diskGiB: 1 },
    image: { ref: 'busybox:web' },
    desiredState,
  });
  beforeAll(async () => {
    host = await startCrunRuntimeHost(8);
  }, 60_000);
  afterAll(() => host?.[Symbol.asyncDispose](), 60_000);

  it('serves on its own address from the host, keeps what it wrote across a stop and a start, and leaves the image as it was', async () => {
    const started = (await invoke('apply', spec('running'))) as RuntimeInstanceStatus;
    expect(started).toEqual({ id: 'web-1', state: 'running', addresses: ['10.213.8.2'], message: 'flavor limits not enforced (limits: none)' });
    // Reached from the host over the runtime's bridge: the container's own httpd answers with its hostname.
    await expect.poll(async () => (await fetch('http://10.213.8.2/index.html').catch(() => undefined))?.text(), { timeout: 10_000 }).toBe('web-1\n');

    host.crun('exec', 'web-1', '/bin/sh', '-c', 'echo kept > /etc/marker');
    expect(await invoke('apply', spec('stopped'))).toEqual({ id: 'web-1', state: 'stopped', addresses: [] });
    await expect(fetch('http://10.213.8.2/index.html', { signal: AbortSignal.timeout(1_000) })).rejects.toThrow();
    expect(await invoke('apply', spec('running'))).toMatchObject({ state: 'running', addresses: ['10.213.8.2'] });
    expect(host.crun('exec', 'web-1', '/bin/cat', '/etc/marker')).toBe('kept\n');
    expect(existsSync(join(host.rootfs, 'etc/marker'))).toBe(false);

    expect(await invoke('remove', 'web-1')).toBeNull();
    expect(await invoke('list')).toEqual([]);
    expect(stateOf(host.crun, 'web-1')).toBeNull();
  }, 60_000);
});
