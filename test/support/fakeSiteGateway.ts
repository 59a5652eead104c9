import { generateKeyPairSync } from 'node:crypto';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { agentGateway } from '../../services/agents/agentGateway.ts';

/** A syntactically valid SPKI pin (no real peer is ever contacted through the fake site). */
export const pin = 'A'.repeat(43) + '=';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
/** The site agent's registered state, as the fake repositories answer it. */
export const agent = { exists: true, agentId: 'site-dc1', role: 'site', siteId: 'dc1', nodeId: null, publicKey: raw.toString('base64'), keyId: keyIdOf(raw) };

/** A site agent in memory: commands published are stored; `answer(n)` stores the signed result of the n-th as accepted. */
export function fakeSite() {
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
        commandNonce: c.nonce,
      };
      // Where the result intake stores what it accepted, which is where the gateway reads answers.
      results.set(Subjects.acceptedAgentResult(c.siteId, c.nodeId, c.commandId, c.nonce), signAgentResult(result, { privateKey, publicKeyRaw: raw }));
    },
    deps: {
      js: { publish: async (_s: string, data: string) => void published.push(AgentCommand.parse(JSON.parse(data))) },
      jsm: {
        direct: {
          getMessage: async (_stream: string, q: { last_by_subj: string }) => (results.has(q.last_by_subj) ? { data: results.get(q.last_by_subj)! } : null),
        },
      },
    },
  };
}

/**
 * The gateway of attempt 1 of step 3 of `wf-1` on node n1 (address 10.0.5.21) at site dc1, talking to `site`; `extra`
 * replaces any of its dependencies (a secret ticket issuer, the repository, the result watch).
 */
export function gatewayOn(site: ReturnType<typeof fakeSite>, extra: Partial<Parameters<typeof agentGateway>[0]> = {}) {
  return agentGateway(
    {
      js: site.deps.js as never,
      jsm: site.deps.jsm as never,
      repository: {
        load: async (agg: { type: string }) => ({ state: agg.type === 'site' ? { exists: true, siteId: 'dc1', name: 'DC', provisioningCidrs: [] } : agent }),
        judged: async (_agg: unknown, _id: string, judge: (state: unknown) => unknown) => judge({ state: agent }),
        latestSeen: async () => ({ state: agent }),
      } as never,
      results: {} as never,
      joins: {} as never,
      recheckMs: 1_000,
      onVerified: () => undefined,
      onRejected: async () => undefined,
      onRejectedCount: async () => undefined,
      attemptNonce: 'bm9uY2Utb2YtdGhlLWF0dGVtcHQ',
      bootedRamdisk: undefined,
      mayEnqueue: () => undefined,
      ...extra,
    },
    {
      node: {
        nodeId: 'n1',
        siteId: 'dc1',
        bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' },
        macs: ['52:54:00:aa:bb:01'],
        addresses: ['10.0.5.21'],
        productUuid: null,
        poolId: null,
        hardwareProfile: 'default',
        deployDriver: 'image-stream',
      },
      workflow: { workflowId: 'wf-1', operation: 'deploy', stepIndex: 3, attempt: 1, startedAt: new Date().toISOString() },
      idempotencyKey: 'wf-1-s3-a1',
      deadlineMs: Date.now() + 60_000,
      heartbeat: () => undefined,
      signal: new AbortController().signal,
      log: { info: () => undefined } as never,
    },
  );
}
