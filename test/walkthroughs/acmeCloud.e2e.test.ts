import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clientTokenOf } from 'better-compute/sdk';
import { startProcessStack } from '../support/processStack.ts';
import { AcmeCloud, issueAccountToken } from './acme-cloud/cloud.ts';

// The deployment names the plugin module; the control plane imports it (nothing of it is imported here).
const PLUGIN_MODULE = fileURLToPath(new URL('./acme-cloud/plugin.ts', import.meta.url));
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAcmeWalkthroughTenantKey0001 tenant@laptop';
const USER_DATA = '#cloud-config\npackages: [nginx]\nruncmd: [systemctl enable --now nginx]\n';

interface Instance {
  observed: string | null;
  providerInstanceId: string | null;
  addresses: string[];
  quotaStatus: string;
  message: string | null;
}

describe('walkthrough 2: VPS instances on Acme Cloud through a provider plugin', () => {
  it(
    'creates, survives a reconciler restart, stops and deletes one server per instance, refuses over quota, fails a wrong token once',
    { timeout: 300_000 },
    async () => {
      const accountToken = issueAccountToken();
      // Slow boots keep the instance provisioning long enough to restart the reconciler in the middle of it.
      await using cloud = await AcmeCloud.start({ token: accountToken, bootMs: 2_000, stopMs: 300, deleteMs: 300 });
      await using stack = await startProcessStack({ layout: 'single', machines: 0, env: { BC_PLUGINS: PLUGIN_MODULE, BC_VPS_RESYNC_MS: '200' } });
      const call = async (method: string, path: string, body?: unknown, token = stack.token) => {
        const res = await fetch(`${stack.api}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const admin = async (name: string, payload: unknown) => {
        const res = await call('POST', `/v1/commands/${name}`, payload);
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      };
      const nodesBefore = (await call('GET', '/v1/nodes')).body.items;

      // Operator: the token sealed, the account naming it, a provider pool without agent, flavors on Acme offers.
      expect((await call('PUT', '/v1/secrets/acme-token', { kind: 'provider-token', value: accountToken })).status).toBe(201);
      expect((await call('PUT', '/v1/secrets/acme-wrong', { kind: 'provider-token', value: issueAccountToken() })).status).toBe(201);
      await admin('vps.createProviderAccount', {
        accountId: 'acme',
        providerId: 'acme-cloud',
        region: 'fra1',
        config: { endpoint: cloud.endpoint },
        tokenSecretId: 'acme-token',
      });
      await admin('vps.createProviderAccount', {
        accountId: 'acme-bad',
        providerId: 'acme-cloud',
        region: 'fra1',
        config: { endpoint: cloud.endpoint },
        tokenSecretId: 'acme-wrong',
      });
      await admin('vps.createTenant', { tenantId: 'tenant-a', name: 'Tenant A' });
      await admin('vps.setQuota', { tenantId: 'tenant-a', instances: 2, vcpus: 2, memoryMib: 4_096, diskGib: 100 });
      await admin('vps.createFlavor', { flavorId: 'small', vcpus: 1, memoryMib: 1_024, diskGib: 25 });
      await admin('vps.createFlavor', { flavorId: 'medium', vcpus: 2, memoryMib: 4_096, diskGib: 80 });
      for (const [poolId, accountId] of [
        ['acme-pool', 'acme'],
        ['acme-bad-pool', 'acme-bad'],
      ] as const) {
        await admin('vps.createPool', { poolId, class: 'provider', agent: 'none', accountId });
        await admin('vps.offerPool', { poolId, tenantId: 'tenant-a' });
        await admin('vps.mapFlavor', { flavorId: 'small', poolId, offerId: 'a1.small' });
        await admin('vps.mapFlavor', { flavorId: 'medium', poolId, offerId: 'a1.medium' });
      }
      const tenant = (await call('POST', '/v1/tokens', { tokenId: 'tenant-a-token', role: 'tenant', tenantId: 'tenant-a' })).body.token as string;
      const asTenant = (method: string, path: string, body?: unknown) => call(method, path, body, tenant);
      const until = async (id: string, done: (i: Instance) => boolean) => {
        for (let i = 0; ; i++) {
          // A read before the projector has the instance answers 404; its body is not an instance.
          const read = await asTenant('GET', `/v1/vps/instances/${id}`);
          const current = read.body as Instance;
          if (read.status === 200 && done(current)) return current;
          if (i > 600) throw new Error(`${id} stayed ${JSON.stringify(current)}\n${stack.logs()}`);
          await sleep(100);
        }
      };
      const serversOf = (id: string) => cloud.records().filter((r) => r.clientToken === clientTokenOf(id));

      // Tenant: create with an SSH key and user data.
      const created = await asTenant('POST', '/v1/commands/vps.createInstance', {
        instanceId: 'web-1',
        poolId: 'acme-pool',
        flavorId: 'small',
        image: 'debian-12',
        sshKeys: [SSH_KEY],
        userData: USER_DATA,
      });
      expect(created.status).toBe(201);
      // The cloud is booting the server (2 s): the control plane records its id with the state it reaches next.
      for (let i = 0; serversOf('web-1')[0]?.status !== 'provisioning'; i++) {
        if (i > 600) throw new Error(`no server provisioning for web-1: ${JSON.stringify(cloud.records())}\n${stack.logs()}`);
        await sleep(20);
      }
      // A reconciler killed mid-provisioning: its successor finds the server by client token and follows it.
      await stack.processes.controlPlane.kill();
      await stack.processes.controlPlane.restart();
      // The first running report records the provider id, and the read model counts the reservation as used from it.
      const running = await until('web-1', (i) => i.observed === 'running' && i.quotaStatus === 'used');
      expect(running.addresses).toEqual([expect.stringMatching(/^203\.0\.113\.\d+$/)]);
      expect(serversOf('web-1')).toEqual([
        expect.objectContaining({
          id: running.providerInstanceId,
          createdForToken: 1,
          sshKeys: [SSH_KEY],
          userData: USER_DATA,
          offer: 'a1.small',
          status: 'running',
        }),
      ]);
      expect(JSON.stringify(cloud.records())).not.toContain('bcj_');

      // Over quota (1 + 2 vCPUs > 2): refused at the API, never reaches the cloud.
      const over = await asTenant('POST', '/v1/commands/vps.createInstance', {
        instanceId: 'web-big',
        poolId: 'acme-pool',
        flavorId: 'medium',
        image: 'debian-12',
        sshKeys: [SSH_KEY],
      });
      expect([over.status, over.body.code]).toEqual([409, 'QUOTA_EXCEEDED']);

      // A wrong account token: one error with the provider's words, the reservation given back, no retries.
      expect(
        (
          await asTenant('POST', '/v1/commands/vps.createInstance', {
            instanceId: 'web-bad',
            poolId: 'acme-bad-pool',
            flavorId: 'small',
            image: 'debian-12',
            sshKeys: [SSH_KEY],
          })
        ).status,
      ).toBe(201);
      const failed = await until('web-bad', (i) => i.observed === 'error' && i.quotaStatus === 'released');
      expect(failed.message).toMatch(/^PROVIDER_CONFIGURATION: HTTP 401/);
      await sleep(2_000);
      const history = (await asTenant('GET', '/v1/events?aggregate=vps.instance/web-bad')).body.items as { data: { observed: string } }[];
      expect(history.map((e) => e.data.observed)).toEqual(['provisioning', 'error']);

      // Stop, then delete.
      expect((await asTenant('POST', '/v1/commands/vps.stopInstance', { instanceId: 'web-1' })).status).toBe(201);
      await until('web-1', (i) => i.observed === 'stopped');
      expect(serversOf('web-1')).toEqual([expect.objectContaining({ status: 'stopped', power: 'off', deleted: false })]);
      expect((await asTenant('POST', '/v1/commands/vps.deleteInstance', { instanceId: 'web-1' })).status).toBe(201);
      await until('web-1', (i) => i.observed === 'deleted' && i.quotaStatus === 'released');
      expect(serversOf('web-1')).toEqual([expect.objectContaining({ deleted: true, createdForToken: 1 })]);
      const zero = { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 };
      expect((await asTenant('GET', '/v1/tenants/tenant-a/quota')).body).toMatchObject({ used: zero, reserved: zero });

      expect(cloud.records().map((r) => r.clientToken)).toEqual([clientTokenOf('web-1')]);
      expect((await call('GET', '/v1/nodes')).body.items).toEqual(nodesBefore);
    },
  );
});
