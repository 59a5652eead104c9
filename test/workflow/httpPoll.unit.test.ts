import { describe, expect, it } from 'vitest';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { issueSecretTicket, verifySecretTicket } from '../../services/secrets/secretTicket.ts';
import { fakeSite, gatewayOn, pin } from '../support/fakeSiteGateway.ts';

describe('httpViaSite', () => {
  it('with poll, answers the newest settled answer per key and sends the next request only once the previous settled', async () => {
    const site = fakeSite();
    const platform = gatewayOn(site);
    const poll = () => platform.httpViaSite({ url: 'https://10.0.5.21:50000/machine/version', tlsSpkiSha256: pin, key: 'talos', poll: true });

    expect(await poll()).toBeNull(); // nothing settled yet; request 1 goes out
    expect(await poll()).toBeNull(); // request 1 still in flight: nothing more is sent
    expect(site.published.map((c) => c.commandId)).toEqual(['wf-1-s3-a1-talos-1']);
    site.answer(1, { ok: false });
    expect(await poll()).toBeNull(); // it failed (not listening yet): still no answer; request 2 goes out
    site.answer(2, { ok: true, status: 200 });
    expect(await poll()).toMatchObject({ status: 200, body: 'v1.8.0' });
    expect(site.published.map((c) => [c.commandId, c.kind, c.destructive])).toEqual([
      ['wf-1-s3-a1-talos-1', 'site.httpProxy', true],
      ['wf-1-s3-a1-talos-2', 'site.httpProxy', true],
      ['wf-1-s3-a1-talos-3', 'site.httpProxy', true],
    ]);
  });

  it('tickets secret headers with the master key, and refuses them without one', async () => {
    const masterKey = new MasterKey(Buffer.alloc(32, 3));
    const site = fakeSite();
    const request = {
      url: 'https://10.0.5.21/api',
      tlsSpkiSha256: pin,
      method: 'POST' as const,
      body: '{}',
      secretHeaders: { Authorization: 'secret:talos-token' },
    };
    // Only the published command matters here; the wait for its answer (no result watch in this fake) is dropped.
    void gatewayOn(site, { issueSecretTicket: (claims) => issueSecretTicket(masterKey, claims) })
      .httpViaSite(request)
      .catch(() => undefined);
    await expect.poll(() => site.published.length).toBe(1);
    const sent = site.published[0]!;
    expect(verifySecretTicket(masterKey, (sent.params as { secretTicket: string }).secretTicket)).toEqual({
      commandId: sent.commandId,
      nodeId: 'n1',
      refs: ['secret:talos-token'],
      notAfter: sent.notAfter,
    });
    await expect(gatewayOn(fakeSite()).httpViaSite(request)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
  });
});
