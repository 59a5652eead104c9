import { expect } from 'vitest';
import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import type { startApi } from '../support/apiFixture.ts';
import { bundleOf, newPublisher } from './bundleFixture.ts';

type Api = Awaited<ReturnType<typeof startApi>>['app'];

/**
 * Site `dc1`, publisher `acme` registered, and `nginx` published at each of `versions` the way an operator does it:
 * the bundle uploaded, then the version declared by the bundle's digest.
 */
export async function publishNginx(app: Api, bus: CommandBus, versions: readonly string[]): Promise<void> {
  const operator = { actor: 'test' };
  await bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, ...operator });
  const acme = newPublisher('acme');
  await bus.execute({ name: 'pki.registerPublisher', payload: { publisherId: 'acme', publicKey: acme.publicKey }, ...operator });
  for (const version of versions) {
    const bytes = bundleOf(acme, { name: 'nginx', version, provides: ['http'], requires: [], exclusive: [] });
    const put = await app.inject({
      method: 'PUT',
      url: '/v1/modules/bundles',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from(bytes),
    });
    const published = await app.inject({ method: 'POST', url: '/v1/modules/nginx/versions', payload: { version, bundleSha256: put.json().sha256 } });
    expect(published.statusCode, published.body).toBe(201);
  }
}
