import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { startImageServer } from '../support/imageServer.ts';
import { startProcessStack } from '../support/processStack.ts';

// The plugin is a third party's: its source imports only `better-compute/sdk/bcx`; bcd runs the bundle it is pinned by.
const PLUGIN = fileURLToPath(new URL('./hello-vm/plugin.ts', import.meta.url));
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHelloVmWalkthroughTenantKey01 tenant@laptop';
const NODE = 'sim-m001';

interface Instance {
  state: string;
  observed: string | null;
  addresses: string[];
  message: string | null;
  quotaStatus: string;
  placement: { nodeId: string; runtime: string; considered: number; freeBefore: { vcpus: number } } | null;
}

/** What the instance's own server answers on the port its runtime reported (null: nothing answers there). */
async function served(instance: Instance): Promise<{ id: string; sshKeys: string[] } | null> {
  const port = /127\.0\.0\.1:(\d+)/.exec(instance.message ?? '')?.[1];
  if (!port) return null;
  try {
    return (await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) })).json()) as { id: string; sshKeys: string[] };
  } catch {
    return null;
  }
}

describe('walkthrough 4: instances on our own metal through a third-party runtime plugin', () => {
  it(
    'pins the plugin in bcd node, labels the node with its driver, places a pool on it, runs, stops, starts and deletes instances, and frees the capacity',
    { timeout: 300_000 },
    async () => {
      // An image without a partition table: the deploy writes no seed, so the installed OS runs no agent of its own;
      // the host's bcd node is the one this test starts, as an operator installing it by hand would.
      await using image = await startImageServer(256 * 1024);
      await using stack = await startProcessStack({
        layout: 'compact',
        machines: 1,
        env: {
          BC_TEST_SIM_DISK_BYTES: String(4 * 1024 ** 3),
          BC_TEST_SIM_BMC_DELAY_MS: '50',
          BC_VPS_RESYNC_MS: '200',
          BC_VPS_HOST_RESEND_MS: '5000',
          BC_VPS_PLACEMENT_WAIT_MS: '2000',
        },
      });
      const call = async (method: string, path: string, body?: unknown, token = stack.token) => {
        const res = await fetch(`${stack.api}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, text, body: (text.startsWith('{') ? JSON.parse(text) : {}) as Record<string, any> };
      };
      const admin = async (name: string, payload: unknown) => {
        const res = await call('POST', `/v1/commands/${name}`, payload);
        expect(res.status, `${name}: ${res.text}`).toBeLessThan(300);
      };
      const poll = async <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const value = await read();
          if (done(value)) return value;
          if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}\n${stack.logs()}`);
          await sleep(100);
        }
      };
      const node = () => call('GET', `/v1/nodes/${NODE}`).then((r) => r.body);

      // The simulated machine is inspected, then deployed.
      await poll('ready', node, (n) => n.state === 'ready', 90_000);
      await admin('metal.deploy', { nodeId: NODE, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: [] });
      const deployed = await poll('deployed', node, (n) => n.state === 'deployed', 120_000);
      const cores = deployed.inventory.cpus.cores as number;

      // The plugin in the host's plugins folder, pinned by its sha256; bcd node joins with a token the operator minted.
      using plugins = await bcxPluginFolder(PLUGIN);
      plugins.pin('hello-vm');
      const minted = await call('POST', '/v1/join-tokens', { role: 'node', siteId: 'sim', nodeId: NODE, ttlSeconds: 600 });
      expect(minted.status, minted.text).toBe(201);
      const credsFile = join(plugins.stateRoot, '..', 'join.creds');
      writeFileSync(credsFile, (await call('GET', '/v1/join-creds')).text, { mode: 0o600 });
      const args = ['node', '--site', 'sim', '--node', NODE, '--nats', stack.nats.url, '--state', plugins.stateRoot, '--plugins', plugins.folder];
      const bcd = spawn(process.execPath, ['--import', 'tsx', 'daemon/bcd.ts', ...args], {
        env: { ...process.env, BC_JOIN_TOKEN: minted.body.token as string, BC_JOIN_CREDS: credsFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let bcdOutput = '';
      bcd.stdout.on('data', (chunk: Buffer) => (bcdOutput = (bcdOutput + chunk.toString()).slice(-40_000)));
      bcd.stderr.on('data', (chunk: Buffer) => (bcdOutput = (bcdOutput + chunk.toString()).slice(-40_000)));
      const exited = once(bcd, 'exit');
      try {
        // Hello.drivers in its signed heartbeat: the node carries bc.dev/driver.hello-vm=<the plugin's version>.
        await poll('driver label', node, (n) => n.labels?.['bc.dev/driver.hello-vm'] === '1.0.0', 60_000);

        // A metal pool selecting the runtime; a flavor as big as the machine's cores, so it takes one instance.
        await admin('vps.createPool', { poolId: 'hello-metal', class: 'metal', agent: 'bcd', siteId: 'sim', runtime: 'hello-vm' });
        await admin('vps.createFlavor', { flavorId: 'whole', vcpus: cores, memoryMib: 256, diskGib: 1 });
        await admin('vps.mapFlavor', { flavorId: 'whole', poolId: 'hello-metal', offerId: 'hello-whole' });
        await admin('vps.createTenant', { tenantId: 'tenant-a', name: 'Tenant A' });
        await admin('vps.setQuota', { tenantId: 'tenant-a', instances: 4, vcpus: 4 * cores, memoryMib: 4_096, diskGib: 10 });
        await admin('vps.offerPool', { poolId: 'hello-metal', tenantId: 'tenant-a' });
        // The pools list is a read model: it shows the pool once its projector has applied the commands above.
        const pools = await poll(
          'pool listed',
          async () => (await call('GET', '/v1/vps/pools')).body.items as { poolId: string; runtime?: string }[],
          (items) => items.length > 0,
        );
        expect(pools).toEqual([expect.objectContaining({ poolId: 'hello-metal', runtime: 'hello-vm' })]);
        const tenant = (await call('POST', '/v1/tokens', { tokenId: 'tenant-a-token', role: 'tenant', tenantId: 'tenant-a' })).body.token as string;
        const asTenant = (method: string, path: string, body?: unknown) => call(method, path, body, tenant);
        const create = async (instanceId: string) => {
          const res = await asTenant('POST', '/v1/commands/vps.createInstance', {
            instanceId,
            poolId: 'hello-metal',
            flavorId: 'whole',
            image: 'hello:1',
            sshKeys: [SSH_KEY],
          });
          expect(res.status, res.text).toBe(201);
        };
        const until = (id: string, done: (i: Instance) => boolean) =>
          poll(
            id,
            () => asTenant('GET', `/v1/vps/instances/${id}`).then((r) => (r.status === 200 ? (r.body as Instance) : null)),
            (i): i is Instance => i !== null && done(i),
          ) as Promise<Instance>;

        // Created by the tenant: placed on the node with the driver, running, its server up with the tenant's key.
        await create('vm-1');
        const running = await until('vm-1', (i) => i.state === 'running');
        expect(running).toMatchObject({ addresses: ['127.0.0.1'], quotaStatus: 'used' });
        expect(running.placement).toMatchObject({ nodeId: NODE, runtime: 'hello-vm', considered: 1, freeBefore: { vcpus: cores } });
        expect(await served(running)).toEqual({ id: 'vm-1', sshKeys: [SSH_KEY] });

        // The node is full: another instance of the size is refused with the node's reason, its quota given back.
        await create('vm-2');
        const refused = await until('vm-2', (i) => i.state === 'error');
        expect(refused.message).toMatch(new RegExp(`NO_CAPACITY.*${NODE}: INSUFFICIENT_CAPACITY`));
        await until('vm-2', (i) => i.quotaStatus === 'released');

        // Stopped: the runtime stops the process, and nothing answers on its port any more.
        expect((await asTenant('POST', '/v1/commands/vps.stopInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' })).status).toBe(201);
        const stopped = await until('vm-1', (i) => i.state === 'stopped');
        expect(stopped.addresses).toEqual([]);
        expect(await served(running)).toBeNull();

        // Started again: a new process serving again.
        expect((await asTenant('POST', '/v1/commands/vps.startInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' })).status).toBe(201);
        const restarted = await until('vm-1', (i) => i.state === 'running');
        expect(await served(restarted)).toEqual({ id: 'vm-1', sshKeys: [SSH_KEY] });

        // Deleted: gone from the host, unplaced, its quota released.
        expect((await asTenant('POST', '/v1/commands/vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' })).status).toBe(201);
        const deleted = await until('vm-1', (i) => i.state === 'deleted' && i.placement === null && i.quotaStatus === 'released');
        expect(deleted.addresses).toEqual([]);
        expect(await served(restarted)).toBeNull();

        // The node's capacity is free again: the next instance of the size runs there.
        await create('vm-3');
        const next = await until('vm-3', (i) => i.state === 'running');
        expect(next.placement?.nodeId).toBe(NODE);
        expect(await served(next)).toEqual({ id: 'vm-3', sshKeys: [SSH_KEY] });
        expect((await asTenant('POST', '/v1/commands/vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-3' })).status).toBe(201);
        await until('vm-3', (i) => i.state === 'deleted' && i.placement === null);
        expect(await served(next)).toBeNull();
      } catch (err) {
        const seen = await node();
        throw new Error(
          `${(err as Error).message}\n--- node\n${JSON.stringify({ labels: seen.labels, lastHeartbeat: seen.lastHeartbeat })}\n--- bcd node\n${bcdOutput}`,
          { cause: err },
        );
      } finally {
        bcd.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000)]);
        if (bcd.exitCode === null) bcd.kill('SIGKILL');
      }
    },
  );
});
