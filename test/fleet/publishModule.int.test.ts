import { describe, expect, it } from 'vitest';
import { moduleAggregate } from '../../services/fleet/module/module.ts';
import { startApi } from '../support/apiFixture.ts';
import { bundleOf, newPublisher } from './bundleFixture.ts';

describe('publishing a module version through the API and the blob store', () => {
  it('publishes an uploaded bundle once, and refuses what does not verify with named codes', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app, bus } = env;
    const acme = newPublisher('acme');
    await bus.execute({ name: 'pki.registerPublisher', payload: { publisherId: 'acme', publicKey: acme.publicKey }, actor: 'test' });
    const upload = async (bytes: Uint8Array) => {
      const res = await app.inject({
        method: 'PUT',
        url: '/v1/modules/bundles',
        headers: { 'content-type': 'application/octet-stream' },
        payload: Buffer.from(bytes),
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ sha256: string }>().sha256;
    };
    const publish = (module: string, version: string, bundleSha256: string) =>
      app.inject({ method: 'POST', url: `/v1/modules/${module}/versions`, payload: { version, bundleSha256 } });

    const sha = await upload(bundleOf(acme));
    const published = await publish('dns-resolver', '1.2.0', sha);
    expect(published.statusCode, published.body).toBe(201);
    expect(published.json()).toMatchObject({ module: 'dns-resolver', version: '1.2.0', duplicate: false });
    const module = (await bus.repository.load(moduleAggregate, 'dns-resolver')).state;
    expect(module.versions.map((v) => [v.version, v.bundleSha256, v.publisherId])).toEqual([['1.2.0', sha, 'acme']]);

    const seq = published.json<{ seq: number }>().seq;
    const listed = await app.inject({ method: 'GET', url: `/v1/modules?minSeq=${seq}` });
    expect(listed.json()).toMatchObject({ items: [{ name: 'dns-resolver', versionCount: 1, lastVersion: '1.2.0' }] });
    const shown = await app.inject({ method: 'GET', url: `/v1/modules/dns-resolver?minSeq=${seq}` });
    expect(shown.json()).toMatchObject({
      versions: [{ version: '1.2.0', bundleSha256: sha, publisherId: 'acme', signingKey: acme.publicKey, manifest: { provides: ['dns'] } }],
    });
    expect((await app.inject({ method: 'GET', url: `/v1/modules/ntp?minSeq=${seq}` })).statusCode).toBe(404);

    const again = await publish('dns-resolver', '1.2.0', sha);
    expect([again.statusCode, again.json().code]).toEqual([409, 'MODULE_VERSION_EXISTS']);
    const renamed = await publish('ntp', '1.2.0', sha);
    expect([renamed.statusCode, renamed.json().code]).toEqual([422, 'MODULE_NAME_MISMATCH']);
    const missing = await publish('dns-resolver', '1.3.0', 'f'.repeat(64));
    expect([missing.statusCode, missing.json().code]).toEqual([422, 'BUNDLE_NOT_STORED']);

    const stranger = await upload(bundleOf(newPublisher('globex'), { version: '1.3.0' }));
    expect((await publish('dns-resolver', '1.3.0', stranger)).json().code).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    const tampered = bundleOf(acme, { version: '1.3.0' });
    const firstByteOfLastFile = tampered.byteLength - 1024 - 512;
    tampered[firstByteOfLastFile] = tampered[firstByteOfLastFile]! ^ 1;
    expect((await publish('dns-resolver', '1.3.0', await upload(tampered))).json().code).toBe('BUNDLE_FILE_MISMATCH');

    // An Idempotency-Key makes a retried publish answer the first one; the same key for another bundle is refused.
    const sha14 = await upload(bundleOf(acme, { version: '1.4.0' }));
    const keyed = (bundleSha256: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/modules/dns-resolver/versions',
        headers: { 'idempotency-key': 'publish-1-4-0' },
        payload: { version: '1.4.0', bundleSha256 },
      });
    expect((await keyed(sha14)).json()).toMatchObject({ version: '1.4.0', duplicate: false });
    expect((await keyed(sha14)).json()).toMatchObject({ version: '1.4.0', duplicate: true });
    expect((await keyed(sha)).json().code).toBe('IDEMPOTENCY_KEY_REUSED');

    // Revoked: a bundle the publisher signed before is no longer published.
    await bus.execute({ name: 'pki.revokePublisher', payload: { publisherId: 'acme', reason: 'key leaked' }, actor: 'test' });
    const revoked = await bus.execute({ name: 'pki.revokePublisher', payload: { publisherId: 'acme', reason: 'again' }, actor: 'test' });
    const late = await publish('dns-resolver', '1.5.0', await upload(bundleOf(acme, { version: '1.5.0' })));
    expect(late.json().code).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    const publishers = await app.inject({ method: 'GET', url: `/v1/module-publishers?minSeq=${revoked.seq}` });
    expect(publishers.json()).toEqual({ items: [expect.objectContaining({ publisherId: 'acme', status: 'revoked', publicKey: acme.publicKey })] });

    // Never as a plain operator command: only the route hands the decider the bundle's bytes.
    const direct = await app.inject({
      method: 'POST',
      url: '/v1/commands/fleet.publishModuleVersion',
      payload: { module: 'dns-resolver', version: '1.6.0', bundleSha256: sha },
    });
    expect([direct.statusCode, direct.json().code]).toEqual([404, 'UNKNOWN_COMMAND']);
  });
});
