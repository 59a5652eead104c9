import { describe, expect, it } from 'vitest';
import { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { checkProxyRequest } from '../../services/agents/httpProxyPolicy.ts';
import { fakeSite, gatewayOn, pin } from '../support/fakeSiteGateway.ts';

const target = { addresses: ['10.0.5.21'], provisioningCidrs: ['10.0.5.0/24'] };
const req = (r: Record<string, unknown>) => HttpProxyRequest.parse(r);
const refusal = (r: Record<string, unknown>, t = target) => {
  try {
    checkProxyRequest(req(r), t);
    return 'allowed';
  } catch (err) {
    expect(err).toMatchObject({ code: 'PROXY_REFUSED' });
    return (err as Error).message;
  }
};

describe('site.httpProxy bound', () => {
  it('allows pinned https to the node, plain http on the provisioning network, credentials as secret headers', () => {
    expect(refusal({ url: 'https://10.0.5.21:50000/machine/version', tlsSpkiSha256: pin })).toBe('allowed');
    expect(refusal({ url: 'http://10.0.5.21/status' })).toBe('allowed');
    expect(
      refusal({ url: 'https://10.0.5.21/api', tlsSpkiSha256: pin, method: 'POST', body: '{}', secretHeaders: { Authorization: 'secret:talos-token' } }),
    ).toBe('allowed');
  });

  it('refuses each way out of the bound', () => {
    expect(refusal({ url: 'https://talos.example.com/', tlsSpkiSha256: pin })).toMatch(/not an IPv4 literal/);
    expect(refusal({ url: 'https://10.0.5.22/', tlsSpkiSha256: pin })).toMatch(/not an address recorded for this node/);
    expect(refusal({ url: 'https://169.254.169.254/latest/meta-data', tlsSpkiSha256: pin })).toMatch(/not an address recorded/);
    expect(refusal({ url: 'https://admin:pw@10.0.5.21/', tlsSpkiSha256: pin })).toMatch(/credentials in the url/);
    expect(refusal({ url: 'http://10.0.5.21/' }, { addresses: ['10.0.5.21'], provisioningCidrs: ['10.9.0.0/16'] })).toMatch(/plain http/);
    expect(refusal({ url: 'https://10.0.5.21/' })).toMatch(/needs tlsSpkiSha256/);
    expect(refusal({ url: 'ftp://10.0.5.21/' })).toMatch(/scheme ftp:/);
    expect(refusal({ url: 'https://10.0.5.21/', tlsSpkiSha256: pin, headers: { Host: 'internal.example' } })).toMatch(/header Host may not be set/);
    expect(refusal({ url: 'https://10.0.5.21/', tlsSpkiSha256: pin, headers: { 'Transfer-Encoding': 'chunked' } })).toMatch(/Transfer-Encoding/);
    expect(refusal({ url: 'https://10.0.5.21/', tlsSpkiSha256: pin, headers: { Authorization: 'Bearer xyz' } })).toMatch(/send it as a secretHeader/);
    expect(refusal({ url: 'https://10.0.5.21/', tlsSpkiSha256: pin, body: 'x' })).toMatch(/GET carries no body/);
  });

  it('refuses header line breaks and clear secret values in the request schema itself', () => {
    const base = { url: 'https://10.0.5.21/', tlsSpkiSha256: pin };
    expect(HttpProxyRequest.safeParse({ ...base, headers: { 'X-A': 'ok\r\nHost: evil' } }).success).toBe(false);
    expect(HttpProxyRequest.safeParse({ ...base, headers: { 'X-A\r\nHost': 'v' } }).success).toBe(false);
    expect(HttpProxyRequest.safeParse({ ...base, secretHeaders: { Authorization: 'Bearer plaintext' } }).success).toBe(false);
    expect(HttpProxyRequest.safeParse({ ...base, method: 'PATCH' }).success).toBe(false);
  });

  it('creates no agent command for a request to another node', async () => {
    const site = fakeSite();
    const platform = gatewayOn(site);
    await expect(platform.httpViaSite({ url: 'https://10.0.5.99/', tlsSpkiSha256: pin })).rejects.toMatchObject({ code: 'PROXY_REFUSED' });
    expect(site.published).toEqual([]);
  });
});
