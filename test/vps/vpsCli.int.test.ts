import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { SSH_KEY } from './vpsPayloads.ts';

const bin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const run = promisify(execFile);

describe('better-compute vps', () => {
  it('sets up a tenant, pool and flavor, creates an instance and shows quota, with coded refusals', { timeout: 120_000 }, async () => {
    await using env = await startApi();
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    const api = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const cli = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await run(process.execPath, [bin, '--api', api, ...args], {
          env: { ...process.env, BC_DATA_DIR: env.dataDir, BC_API_TOKEN: '' },
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    const ok = async (...args: string[]) => {
      const result = await cli(...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result.stdout;
    };

    // Only what the CLI itself is for goes through it: each run is a process start.
    const setup = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'setup' });
    await setup('site.create', { siteId: 'dc1', name: 'DC 1' });
    expect(await ok('vps', 'create-tenant', 'acme', '--name', 'Acme')).toMatch(/TenantCreated/);
    await ok('vps', 'set-quota', 'acme', '--instances', '2', '--vcpus', '2', '--memory-mib', '4096', '--disk-gib', '50');
    await ok('vps', 'create-pool', 'metal-a', '--class', 'metal', '--agent', 'bcd', '--site', 'dc1', '--provisioning-cidr', '10.0.0.0/24', '--runtime', 'crun');
    await ok('vps', 'create-flavor', 'small', '--vcpus', '1', '--memory-mib', '1024', '--disk-gib', '10');
    await ok('vps', 'map-flavor', 'small', 'metal-a', 'hw-small');
    // Warm slots: kept per flavor and image (an image with colons in it), shown by `vps pools`; refusals are coded.
    expect(await ok('vps', 'set-warm-pool', 'metal-a', '--keep', 'small:2:registry:5000/ubuntu:24.04', '--max-slot-age', '3600')).toMatch(/PoolWarmSet/);
    await env.readers.get('vps')!.waitFor(await env.store.streamLastSequence(), 5_000);
    expect(await ok('vps', 'pools')).toMatch(/metal-a\s+metal\s+bcd\s+dc1\s+crun\s+small\/registry:5000\/ubuntu:24\.04 0\/2 ready/);
    const unsold = await cli('vps', 'set-warm-pool', 'metal-a', '--keep', 'large:1:ubuntu-24.04');
    expect(unsold.code).toBe(1);
    expect(unsold.stderr).toMatch(/error PRECONDITION_FAILED: flavor large is not sold in pool metal-a/);
    expect((await cli('vps', 'set-warm-pool', 'metal-a', '--keep', 'small:two:ubuntu')).stderr).toMatch(/not <flavorId>:<count>:<image>: small:two:ubuntu/);
    await setup('vps.createFlavor', { flavorId: 'large', vcpus: 4, memoryMib: 8_192, diskGib: 80 });
    await setup('vps.mapFlavor', { flavorId: 'large', poolId: 'metal-a', offerId: 'hw-large' });
    await ok('vps', 'offer-pool', 'metal-a', 'acme');
    const created = await ok(
      'vps',
      'create-instance',
      'web1',
      '--tenant',
      'acme',
      '--pool',
      'metal-a',
      '--flavor',
      'small',
      '--image',
      'ubuntu-24.04',
      '--ssh-key',
      SSH_KEY,
    );
    expect(created).toMatch(/vps.createInstance: InstanceRequested \(seq (\d+)\)/);

    const over = await cli(
      'vps',
      'create-instance',
      'big1',
      '--tenant',
      'acme',
      '--pool',
      'metal-a',
      '--flavor',
      'large',
      '--image',
      'ubuntu-24.04',
      '--ssh-key',
      SSH_KEY,
    );
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/error QUOTA_EXCEEDED: quota exceeded on vcpus: limit 2, in use 1/);

    await env.readers.get('vps')!.waitFor(await env.store.streamLastSequence(), 5_000);
    expect(await ok('vps', 'quota', 'acme')).toMatch(/vcpus\s+2\s+0\s+1\s+1/);
    expect(await ok('vps', 'instances', '--tenant', 'acme')).toMatch(/web1\s+acme\s+metal-a\s+small\s+pending\s+running/);
    expect(await ok('vps', 'stop', 'web1', '--tenant', 'acme')).toMatch(/InstanceDesiredStateSet/);
  });
});
