import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BcxError } from '../../daemon/bcx/bcxErrors.ts';
import { instanceHost, type RuntimePlugin } from '../../daemon/node/instances/instanceHost.ts';
import type { RuntimeInstanceStatus } from '../../schemas/bcx/bcxProtocol.ts';
import { InstanceSpec } from '../../schemas/agent/hostInstances.ts';
import { createLogger } from '../../services/platform/logger.ts';

const log = createLogger('instance-host-test', 'silent');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An in-memory runtime speaking the operations' contract; `dies` makes its next apply end as a plugin exit would. */
function memoryRuntime(id: string, kinds: ('runtime' | 'power')[] = ['runtime']) {
  const instances = new Map<string, RuntimeInstanceStatus>();
  const applied: Record<string, unknown>[] = [];
  const plugin = {
    manifest: { id, version: '1.0.0', kinds },
    ready: true,
    dies: false,
    instances,
    applied,
    async invoke(operation: string, args: readonly unknown[]): Promise<unknown> {
      if (operation === 'list') return [...instances.values()];
      if (operation === 'remove') return void instances.delete(args[0] as string);
      const spec = args[0] as InstanceSpec;
      applied.push(spec);
      if (plugin.dies) {
        plugin.dies = false;
        throw new BcxError('PLUGIN_EXITED', `plugin ${id} exited (SIGKILL) before it answered`);
      }
      const status: RuntimeInstanceStatus = { id: spec.id, state: spec.desiredState, addresses: spec.desiredState === 'running' ? ['10.0.0.9'] : [] };
      instances.set(spec.id, status);
      return status;
    },
  };
  return plugin satisfies RuntimePlugin;
}

const spec = (desiredState: 'running' | 'stopped', over: Partial<InstanceSpec> = {}): InstanceSpec => ({
  id: 'vm-1',
  runtime: 'crun',
  flavor: { name: 'small', vcpus: 1, memoryMiB: 512, diskGiB: 10 },
  image: { ref: 'oci:alpine' },
  desiredState,
  ...over,
});

const hostWith = (...runtimes: RuntimePlugin[]) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'bc-instance-host-'));
  dirs.push(stateDir);
  return instanceHost({ stateDir, runtimes: () => runtimes, log });
};

describe('the instance host', () => {
  it('picks the plugin whose hello lists kind runtime under the id, and refuses any other by name', async () => {
    const crun = memoryRuntime('crun');
    const host = hostWith(memoryRuntime('qemu', ['power']), crun);
    await expect(host.apply(spec('running', { runtime: 'qemu' }))).rejects.toMatchObject({ code: 'RUNTIME_NOT_LOADED' });
    crun.ready = false;
    await expect(host.apply(spec('running'))).rejects.toMatchObject({ code: 'RUNTIME_NOT_LOADED', message: expect.stringContaining('between restarts') });
    crun.ready = true;
    expect(await host.apply(spec('running'))).toMatchObject({ runtime: 'crun', status: { state: 'running' } });
    await expect(host.apply(spec('running', { runtime: 'qemu' }))).rejects.toMatchObject({ code: 'RUNTIME_NOT_LOADED' });
  });

  it('passes user data on the first answered apply only, and again after a first apply that went unanswered', async () => {
    const crun = memoryRuntime('crun');
    const host = hostWith(crun);
    crun.dies = true;
    await expect(host.apply(spec('running', { userData: 'ud' }))).rejects.toMatchObject({ code: 'INSTANCE_FAILED' });
    expect(host.records()).toEqual([expect.objectContaining({ settled: false, firstApplied: false })]);
    expect(await host.reconcile()).toEqual({ reapplied: ['vm-1'], failed: [] });
    expect((await host.apply(spec('stopped', { userData: 'ud' }))).userDataDelivered).toBe(false);
    expect(crun.applied.map((a) => a.userData)).toEqual(['ud', 'ud', undefined]);
  });

  it('passes the SSH keys on every apply, kept in the journal with the spec, and refuses a key that is no OpenSSH public key', async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl tenant@laptop';
    const crun = memoryRuntime('crun');
    const host = hostWith(crun);
    await host.apply(spec('running', { sshKeys: [key], userData: 'ud' }));
    await host.apply(spec('stopped', { sshKeys: [key] }));
    expect(crun.applied.map((a) => [a.sshKeys, a.userData])).toEqual([
      [[key], 'ud'],
      [[key], undefined],
    ]);
    expect(host.records()[0]!.spec.sshKeys).toEqual([key]);
    expect(InstanceSpec.safeParse(spec('running', { sshKeys: ['-----BEGIN OPENSSH PRIVATE KEY-----'] })).success).toBe(false);
    expect(InstanceSpec.safeParse(spec('running', { sshKeys: [] })).success).toBe(false);
  });

  it('reconciles only what drifted: an instance its runtime lost or whose state moved; the rest is left alone', async () => {
    const crun = memoryRuntime('crun');
    const host = hostWith(crun);
    await host.apply(spec('running'));
    await host.apply(spec('running', { id: 'vm-2' }));
    expect(await host.reconcile()).toEqual({ reapplied: [], failed: [] });
    crun.instances.delete('vm-1');
    crun.instances.set('vm-2', { id: 'vm-2', state: 'stopped', addresses: [] });
    expect(await host.reconcile()).toEqual({ reapplied: ['vm-1', 'vm-2'], failed: [] });
    expect([...crun.instances.values()].map((s) => s.state)).toEqual(['running', 'running']);
    // A runtime that is not running now leaves its instances for a later pass.
    crun.ready = false;
    crun.instances.clear();
    expect(await host.reconcile()).toEqual({ reapplied: [], failed: [] });
  });

  it('refuses to move an instance to another runtime, and a remove of an unknown instance removes nothing', async () => {
    const host = hostWith(memoryRuntime('crun'), memoryRuntime('qemu'));
    await host.apply(spec('running'));
    await expect(host.apply(spec('running', { runtime: 'qemu' }))).rejects.toMatchObject({ code: 'INVALID_COMMAND' });
    expect(await host.remove('vm-9')).toEqual({ id: 'vm-9', removed: false });
    expect(await host.remove('vm-1')).toEqual({ id: 'vm-1', removed: true });
    expect(host.records()).toEqual([]);
  });
});
