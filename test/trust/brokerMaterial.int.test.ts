import { decode, type Account } from '@nats-io/jwt';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../support/natsServer.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { renderServerConfig } from '../../services/trust/broker/serverConfig.ts';
import { issueUserJwt } from '../../services/trust/broker/userCredentials.ts';
import { nativeSigningKey } from '../../services/trust/broker/nativeSigningKey.ts';
import { createAccount, createUser } from '@nats-io/nkeys';

describe('loadOrCreateBrokerMaterial', () => {
  test('a second call loads the same operator, accounts and JWTs from 0600 files', async () => {
    using dir = tempDir('bc-broker-material-');
    const first = await loadOrCreateBrokerMaterial(join(dir.path, 'broker'));
    const second = await loadOrCreateBrokerMaterial(join(dir.path, 'broker'));
    expect(second.operatorJwt).toBe(first.operatorJwt);
    expect(second.systemAccount).toEqual(first.systemAccount);
    expect(second.appAccount).toEqual(first.appAccount);
    for (const file of readdirSync(join(dir.path, 'broker'))) {
      expect(statSync(join(dir.path, 'broker', file)).mode & 0o777).toBe(0o600);
    }
    const app = decode<Account>(first.appAccount.jwt);
    expect(app.nats.limits).toMatchObject({ disk_storage: -1, mem_storage: -1, streams: -1, consumer: -1 });
  });

  test('changed JetStream limits re-sign the account and keep its revocations', async () => {
    using dir = tempDir('bc-broker-material-');
    const first = await loadOrCreateBrokerMaterial(dir.path);
    await first.reissueAppAccount((claims) => ({ ...claims, revocations: { UREVOKED: 1 } }));
    const limited = await loadOrCreateBrokerMaterial(dir.path, { jetStream: { diskStorage: 1 << 30 } });
    const app = decode<Account>(limited.appAccount.jwt).nats;
    expect(app.limits?.disk_storage).toBe(1 << 30);
    expect(app.revocations).toEqual({ UREVOKED: 1 });
    expect(limited.appAccount.publicKey).toBe(first.appAccount.publicKey);
    // Loaded without limits (the doctor, a plugin's credentials): the stored limit stays, it is not reset to unlimited.
    const reloaded = await loadOrCreateBrokerMaterial(dir.path);
    expect(decode<Account>(reloaded.appAccount.jwt).nats.limits?.disk_storage).toBe(1 << 30);
    expect(reloaded.appAccount.jwt).toBe(limited.appAccount.jwt);
  });

  test('the material, its JSON and the rendered config never show a seed', async () => {
    using dir = tempDir('bc-broker-material-');
    const material = await loadOrCreateBrokerMaterial(dir.path);
    const seeds = readdirSync(dir.path)
      .filter((f) => f.endsWith('.nk'))
      .map((f) => readFileSync(join(dir.path, f), 'utf8'));
    expect(seeds).toHaveLength(5);
    const shown = [
      JSON.stringify(material),
      inspect(material, { depth: 10, showHidden: true }),
      renderServerConfig(material, { storeDir: '/s', resolverDir: '/r' }),
    ];
    for (const text of shown) for (const seed of seeds) expect(text).not.toContain(seed);
  });

  test('the rendered config runs a full resolver with the accounts preloaded', async () => {
    using dir = tempDir('bc-broker-material-');
    const material = await loadOrCreateBrokerMaterial(dir.path);
    const text = renderServerConfig(material, { storeDir: '/data/js', resolverDir: '/data/jwt', port: 4333 });
    expect(text).toContain(`operator: "${material.operatorJwt}"`);
    expect(text).toContain(`system_account: "${material.systemAccount.publicKey}"`);
    expect(text).toMatch(/resolver: \{\n {2}type: full\n {2}dir: "\/data\/jwt"\n {2}allow_delete: false/);
    expect(text).toContain(`${material.appAccount.publicKey}: "${material.appAccount.jwt}"`);
    expect(text).toContain('store_dir: "/data/js"');
    expect(text).toContain('listen: "127.0.0.1:4333"');
  });

  test('a user JWT is refused for a key that is not a user nkey', async () => {
    using dir = tempDir('bc-broker-material-');
    const material = await loadOrCreateBrokerMaterial(dir.path);
    await expect(issueUserJwt(material, material.appAccount.publicKey, { role: 'join' })).rejects.toMatchObject({ reason: 'INVALID_PUBLIC_KEY' });
  });

  test('the native signing key signs the same bytes as the nkey it wraps, and its JWTs verify', async () => {
    const pair = createAccount();
    const native = nativeSigningKey(pair);
    expect(native.getPublicKey()).toBe(pair.getPublicKey());
    for (const text of ['', 'a', 'eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJVIn0', 'x'.repeat(5000)]) {
      const bytes = new TextEncoder().encode(text);
      const signature = native.sign(bytes);
      expect(Buffer.from(signature).equals(Buffer.from(pair.sign(bytes)))).toBe(true);
      expect(native.verify(bytes, signature)).toBe(true);
      expect(pair.verify(bytes, signature)).toBe(true);
    }
    expect(native.verify(new TextEncoder().encode('b'), native.sign(new TextEncoder().encode('a')))).toBe(false);
    expect(native.getPrivateKey()).toEqual(pair.getPrivateKey());
    native.clear();
    expect(() => native.sign(new Uint8Array(1))).toThrow();
    expect(() => native.getPrivateKey()).toThrow();

    using dir = tempDir('bc-broker-material-');
    const material = await loadOrCreateBrokerMaterial(dir.path);
    const user = createUser().getPublicKey();
    const issued = await issueUserJwt(material, user, { role: 'control-plane' });
    // decode verifies the signature with nkeys' own code against the issuer the JWT names.
    expect(decode(issued.jwt)).toMatchObject({ sub: user, iss: material.appSigningKey.getPublicKey() });
    // Revocations are read once per account JWT: a re-signed account is read again.
    await material.reissueAppAccount((claims) => ({ ...claims, revocations: { [user]: Math.floor(Date.now() / 1000) } }));
    await expect(issueUserJwt(material, user, { role: 'control-plane' })).rejects.toMatchObject({ reason: 'USER_REVOKED' });
  });
});
