import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { agentGateway } from '../../services/workflow/agentGateway.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { issueSecretTicket, verifySecretTicket, type SecretTicketClaims } from '../../services/secrets/secretTicket.ts';

const pin = 'A'.repeat(43) + '=';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
const agent = { exists: true, agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey: raw.toString('base64'), keyId: keyIdOf(raw) };

/** A site agent in memory: commands published are stored; `answer(n)` stores the signed result of the n-th. */
function fakeSite() {
  const published: AgentCommand[] = [];
  const results = new Map<string, Uint8Array>();
  return {
    published,
    answer(n: number, outcome: { ok: true; status: number } | { ok: false }) {
      const c = published[n - 1]!;
      const result = {
        commandId: c.commandId,
        kind: c.kind,
        nodeId: c.nodeId,
        siteId: c.siteId,
        agentId: 'site-dc1',
        ok: outcome.ok,
        errorCode: outcome.ok ? '' : 'DRIVER_ERROR',
        errorMessage: outcome.ok ? '' : 'connect ECONNREFUSED',
        payload: outcome.ok ? { status: outcome.status, headers: {}, body: 'v1.8.0' } : null,
        executedAtMs: Date.now(),
      };
      results.set(`bc.site.dc1.res.n1.${c.commandId}`, signAgentResult(result, { privateKey, publicKeyRaw: raw }));
    },
    deps: {
      js: { publish: async (_s: string, data: string) => void published.push(AgentCommand.parse(JSON.parse(data))) },
      jsm: { direct: { getMessage: async (_stream: string, q: { last_by_subj: string }) => (results.has(q.last_by_subj) ? { data: results.get(q.last_by_subj)! } : null) } },
    },
  };
}

function gatewayOn(site: ReturnType<typeof fakeSite>, extra: { issueSecretTicket?: (claims: SecretTicketClaims) => string } = {}) {
  return agentGateway(
      {
        js: site.deps.js as never,
        jsm: site.deps.jsm as never,
        repository: {
          load: async (agg: { type: string }) => ({ state: agg.type === 'site' ? { exists: true, siteId: 'dc1', name: 'DC', provisioningCidrs: [] } : agent }),
        } as never,
        results: {} as never,
        joins: {} as never,
        recheckMs: 1_000,
        onVerified: () => undefined,
        mayEnqueue: () => undefined,
        ...extra,
      },
      {
        node: { nodeId: 'n1', siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, addresses: ['10.0.5.21'] },
        workflow: { workflowId: 'wf-1', operation: 'deploy', stepIndex: 3, attempt: 1, startedAt: new Date().toISOString() },
        idempotencyKey: 'wf-1-s3-a1',
        deadlineMs: Date.now() + 60_000,
        heartbeat: () => undefined,
        signal: new AbortController().signal,
        log: { info: () => undefined } as never,
      },
    );
}

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
    const request = { url: 'https://10.0.5.21/api', tlsSpkiSha256: pin, method: 'POST' as const, body: '{}', secretHeaders: { Authorization: 'secret:talos-token' } };
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
