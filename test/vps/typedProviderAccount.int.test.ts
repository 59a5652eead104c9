import { describe, expect, it } from 'vitest';
import hetznerCloudPlugin from '../../plugins/hetzner-cloud/index.ts';
import { registrationOf } from '../../plugins/sdk/definePlugin.ts';
import { startApi } from '../support/apiFixture.ts';

const SECRET_LOOKING = 'hcloud-token-pasted-in-the-wrong-field-5c1e';

describe('typed provider accounts', () => {
  it(
    'vps.createProviderAccount checks the account against the shape the provider registered, lists the paths, echoes no value and appends nothing',
    { timeout: 60_000 },
    async () => {
      await using env = await startApi();
      await env.bus.execute({ name: 'plugins.register', payload: registrationOf(hetznerCloudPlugin), actor: 'test' });
      expect(
        (await env.app.inject({ method: 'PUT', url: '/v1/secrets/hz-token', payload: { kind: 'provider-token', value: 'x'.repeat(64) } })).statusCode,
      ).toBe(201);
      const create = (payload: object) => env.app.inject({ method: 'POST', url: '/v1/commands/vps.createProviderAccount', payload });
      const account = { accountId: 'hz', providerId: 'hetzner-cloud', region: 'fsn1', tokenSecretId: 'hz-token' };

      const before = await env.store.streamLastSequence();
      const refused = await create({ ...account, region: 'Falkenstein 1', config: { endpoint: SECRET_LOOKING, zone: 'eu-central' } });
      expect(refused.statusCode).toBe(422);
      const problem = refused.json<{ code: string; issues: { path: string; message: string }[] }>();
      expect(problem.code).toBe('PROVIDER_CREDENTIALS_INVALID');
      expect(problem.issues.map((i) => i.path).sort()).toEqual(['endpoint', 'region', 'zone']);
      expect(refused.body).not.toContain(SECRET_LOOKING);
      expect(refused.body).not.toContain('Falkenstein');
      expect(await env.store.streamLastSequence()).toBe(before);

      // The endpoint has a default in the provider's schema: an account may leave it out.
      expect((await create({ ...account, config: {} })).statusCode).toBeLessThan(300);
      expect((await create({ ...account, accountId: 'hz-eu', config: { endpoint: 'https://api.hetzner.cloud/v1' } })).statusCode).toBeLessThan(300);
      // A provider no plugin registered is accepted as before: the reconciler reports it until a plugin brings it.
      expect(
        (await create({ ...account, accountId: 'other', providerId: 'not-registered', region: 'anywhere', config: { zone: 'a' } })).statusCode,
      ).toBeLessThan(300);
    },
  );
});
