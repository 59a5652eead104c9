import { describe, expect, it, vi } from 'vitest';
import { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { agentGateway } from '../../services/workflow/agentGateway.ts';
import { checkProxyRequest } from '../../services/workflow/httpProxyPolicy.ts';

const pin = 'A'.repeat(43) + '=';
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
    expect(refusal({ url: 'https://10.0.5.21/api', tlsSpkiSha256: pin, method: 'POST', body: '{}', secretHeaders: { Authorization: 'secret:talos-token' } })).toBe('allowed');
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
    const publish = vi.fn();
    const platform = agentGateway(
      {
        js: { publish } as never,
        jsm: { direct: { getMessage: vi.fn().mockResolvedValue(null) } } as never,
        repository: { load: vi.fn().mockResolvedValue({ state: { exists: true, siteId: 'dc1', name: 'DC', provisioningCidrs: ['10.0.5.0/24'] } }) } as never,
        results: {} as never,
        joins: {} as never,
        recheckMs: 1_000,
        onVerified: () => undefined,
        mayEnqueue: () => undefined,
      },
      {
        node: { nodeId: 'n1', siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, addresses: ['10.0.5.21'] },
        workflow: { workflowId: 'wf-1', operation: 'deploy', stepIndex: 0, attempt: 1, startedAt: new Date().toISOString() },
        idempotencyKey: 'wf-1-s0-a1',
        deadlineMs: Date.now() + 10_000,
        heartbeat: () => undefined,
        signal: new AbortController().signal,
        log: { info: () => undefined } as never,
      },
    );
    await expect(platform.httpViaSite({ url: 'https://10.0.5.99/', tlsSpkiSha256: pin })).rejects.toMatchObject({ code: 'PROXY_REFUSED' });
    expect(publish).not.toHaveBeenCalled();
  });
});
