import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';
import { instancePayload, quotaOf } from './vpsPayloads.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const TOKEN_VALUE = 'hz-api-token-do-not-leak-7f3a9c';

describe('vps API', () => {
  it(
    'scopes tenants to their own instances and quota, refuses over-quota requests appending nothing, and never shows a token',
    { timeout: 60_000 },
    async () => {
      await using env = await startApi();
      const { app } = env;
      const command = async (name: string, payload: unknown, token?: string) => {
        const res = await app.inject({ method: 'POST', url: `/v1/commands/${name}`, payload: payload as object, ...(token ? { headers: bearer(token) } : {}) });
        return {
          status: res.statusCode,
          body: res.json<{ code?: string; seq: number; detail?: string; issues?: unknown; events: Array<{ type: string; data: Record<string, unknown> }> }>(),
        };
      };
      const setup = async (name: string, payload: unknown) => expect((await command(name, payload)).status, name).toBeLessThan(300);

      expect((await app.inject({ method: 'PUT', url: '/v1/secrets/hz-token', payload: { kind: 'provider-token', value: TOKEN_VALUE } })).statusCode).toBe(201);
      await setup('vps.createProviderAccount', {
        accountId: 'hz',
        providerId: 'hetzner',
        region: 'fsn1',
        config: { project: 'bc' },
        tokenSecretId: 'hz-token',
      });
      await setup('vps.createPool', { poolId: 'cloud-a', class: 'provider', agent: 'none', accountId: 'hz' });
      await setup('site.create', { siteId: 'dc1', name: 'DC 1' });
      await setup('vps.createPool', { poolId: 'metal-b', class: 'metal', agent: 'bcd', siteId: 'dc1' });
      await setup('vps.createFlavor', { flavorId: 'small', vcpus: 1, memoryMib: 1_024, diskGib: 10 });
      await setup('vps.createFlavor', { flavorId: 'large', vcpus: 4, memoryMib: 8_192, diskGib: 80 });
      for (const poolId of ['cloud-a', 'metal-b'])
        for (const flavorId of ['small', 'large']) await setup('vps.mapFlavor', { flavorId, poolId, offerId: `${poolId}-${flavorId}` });
      for (const tenantId of ['tenant-a', 'tenant-b']) {
        await setup('vps.createTenant', { tenantId, name: tenantId.toUpperCase() });
        await setup('vps.setQuota', { tenantId, ...quotaOf(3, 4, 16_384, 200) });
        await setup('vps.offerPool', { poolId: 'cloud-a', tenantId });
      }
      await setup('vps.offerPool', { poolId: 'metal-b', tenantId: 'tenant-b' });
      const token = async (tokenId: string, tenantId: string) =>
        (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role: 'tenant', tenantId } })).json().token as string;
      const a = await token('tenant-a-token', 'tenant-a');
      const b = await token('tenant-b-token', 'tenant-b');

      // The API writes the tenant in: the payload names none.
      const { tenantId: _omitted, ...withoutTenant } = instancePayload('tenant-a', 'a-web', 'small', 'cloud-a');
      const created = await command('vps.createInstance', withoutTenant, a);
      expect([created.status, created.body.events[0]?.data.tenantId]).toEqual([201, 'tenant-a']);
      expect((await command('vps.createInstance', instancePayload('tenant-b', 'b-db', 'small', 'metal-b'), b)).status).toBe(201);

      // Over quota: 1 + 4 vCPUs > 4. Refused with the dimension named, and the log does not move.
      const before = await env.store.streamLastSequence();
      const over = await command('vps.createInstance', instancePayload('tenant-a', 'a-big', 'large', 'cloud-a'), a);
      expect([over.status, over.body.code]).toEqual([409, 'QUOTA_EXCEEDED']);
      expect(over.body.detail).toContain('vcpus: limit 4, in use 1');
      expect(over.body.issues).toEqual([{ path: 'vcpus', message: over.body.detail }]);
      expect(await env.store.streamLastSequence()).toBe(before);

      // A pool not offered to the tenant, another tenant's instance, acting for another tenant, engine commands.
      const notOffered = await command('vps.createInstance', instancePayload('tenant-a', 'a-metal', 'small', 'metal-b'), a);
      expect([notOffered.status, notOffered.body.code]).toEqual([422, 'PRECONDITION_FAILED']);
      expect((await command('vps.stopInstance', { instanceId: 'b-db' }, a)).body.code).toBe('NOT_FOUND');
      expect((await command('vps.deleteInstance', { instanceId: 'b-db', tenantId: 'tenant-b' }, a)).body.code).toBe('FORBIDDEN');
      expect((await command('vps.releaseQuota', { instanceId: 'a-web' }, a)).body.code).toBe('FORBIDDEN');
      expect((await command('vps.createTenant', { tenantId: 'tenant-c', name: 'C' }, a)).body.code).toBe('FORBIDDEN');
      expect(await env.store.streamLastSequence()).toBe(before);

      const stopped = await command('vps.stopInstance', { instanceId: 'a-web' }, a);
      expect(stopped.body.events.map((e) => e.type)).toEqual(['InstanceDesiredStateSet']);
      const get = async (url: string, t?: string) => {
        const res = await app.inject({ url: `${url}${url.includes('?') ? '&' : '?'}minSeq=${stopped.body.seq}`, ...(t ? { headers: bearer(t) } : {}) });
        return { status: res.statusCode, body: res.json(), text: res.body };
      };

      expect((await get('/v1/tenants/tenant-a/quota', a)).body).toEqual({
        limit: quotaOf(3, 4, 16_384, 200),
        used: quotaOf(0, 0, 0, 0),
        reserved: quotaOf(1, 1, 1_024, 10),
      });
      const mine = await get('/v1/vps/instances', a);
      expect(mine.body.items.map((i: { instanceId: string; state: string; desired: string }) => [i.instanceId, i.state, i.desired])).toEqual([
        ['a-web', 'pending', 'stopped'],
      ]);
      expect((await get('/v1/vps/instances/a-web', a)).status).toBe(200);
      for (const url of [
        '/v1/vps/instances/b-db',
        '/v1/tenants/tenant-b',
        '/v1/tenants/tenant-b/quota',
        '/v1/vps/instances?tenantId=tenant-b',
        '/v1/vps/accounts',
      ]) {
        const res = await get(url, a);
        expect([res.status, res.body.code], url).toEqual([404, 'NOT_FOUND']);
      }
      for (const url of ['/v1/tenants', '/v1/vps/instances', '/v1/vps/pools', '/v1/vps/flavors']) {
        const res = await get(url, a);
        expect(res.status, url).toBe(200);
        expect(res.text.includes('tenant-b') || res.text.includes('b-db') || res.text.includes('metal-b'), `${url}: ${res.text.slice(0, 300)}`).toBe(false);
      }
      expect((await get('/v1/vps/pools', a)).body.items.map((p: { poolId: string; offeredTo: string[] }) => [p.poolId, p.offeredTo])).toEqual([
        ['cloud-a', ['tenant-a']],
      ]);

      // Operators see everything; the account shows its token secret's id, and the token is nowhere in views or the log.
      expect((await get('/v1/vps/instances')).body.items.map((i: { instanceId: string }) => i.instanceId)).toEqual(['a-web', 'b-db']);
      expect((await get('/v1/vps/instances?tenantId=tenant-b')).body.items.map((i: { instanceId: string }) => i.instanceId)).toEqual(['b-db']);
      expect((await get('/v1/tenants/tenant-b/quota')).body.reserved).toEqual(quotaOf(1, 1, 1_024, 10));
      const accounts = await get('/v1/vps/accounts');
      expect(accounts.body.items).toMatchObject([{ accountId: 'hz', providerId: 'hetzner', tokenSecretId: 'hz-token', config: { project: 'bc' } }]);
      expect((await get('/v1/vps/pools')).body.items.find((p: { poolId: string }) => p.poolId === 'cloud-a').offeredTo).toEqual(['tenant-a', 'tenant-b']);
      const log: string[] = [];
      for await (const stored of env.store.readAfter('bc.evt.vps.>', 0)) log.push(JSON.stringify(stored.batch));
      expect(log.length).toBeGreaterThan(10);
      for (const text of [...log, accounts.text]) expect(text.includes(TOKEN_VALUE)).toBe(false);
    },
  );
});
