import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { StoredMsg } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { exchangeAgentCommand, acceptedSubjectOf, type AgentExchangeDeps } from '../../services/agents/agentExchange.ts';

const { privateKey } = generateKeyPairSync('ed25519');
const publicKeyRaw = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
const siteAgent = {
  exists: true,
  agentId: 'site-dc1',
  keyId: keyIdOf(publicKeyRaw),
  publicKey: publicKeyRaw.toString('base64'),
  role: 'site',
  siteId: 'dc1',
  nodeId: null,
};

const command: AgentCommand = {
  commandId: 'wf1-s0-a1',
  kind: 'power.set',
  siteId: 'dc1',
  nodeId: 'r1-n1',
  workflowId: 'wf1',
  stepIndex: 0,
  attempt: 1,
  destructive: true,
  params: { action: 'On' },
  issuedAt: '2026-01-01T00:00:00Z',
  notAfter: '2026-01-01T01:00:00Z',
  nonce: 'bm9uY2Utb2YtdGhlLWNvbW1hbmQ',
};

const signedResult = (): StoredMsg =>
  ({
    seq: 7,
    subject: acceptedSubjectOf(command),
    data: signAgentResult(
      {
        commandId: command.commandId,
        kind: command.kind,
        nodeId: command.nodeId,
        siteId: command.siteId,
        agentId: siteAgent.agentId,
        ok: true,
        errorCode: '',
        errorMessage: '',
        payload: { state: 'On' },
        executedAtMs: 1_767_225_600_000,
        commandNonce: command.nonce,
      },
      { privateKey, publicKeyRaw },
    ),
  }) as StoredMsg;

/** An exchange against fakes: what it read from the result stream, what it published, and what the watch handed back. */
function fakes(stored: StoredMsg | undefined) {
  const reads: number[] = [];
  const published: string[] = [];
  const deps = {
    js: { publish: async (subject: string) => void published.push(subject) },
    jsm: { direct: { getMessage: async (_stream: string, q: { seq?: number }) => (reads.push(q.seq ?? 0), reads.length === 1 ? (stored ?? null) : null) } },
    // The exchange takes the signer's key from the cache the log confirmed within 1 s (`latestSeen`), reading it before a refusal.
    repository: {
      latestSeen: async () => ({ state: siteAgent }),
      judged: async (_a: unknown, _id: string, judge: (s: { state: typeof siteAgent }) => unknown) => judge({ state: siteAgent }),
    },
    results: { next: async () => signedResult() },
    recheckMs: 60_000,
  } as unknown as AgentExchangeDeps;
  return { deps, reads, published };
}

describe('agent exchange', () => {
  it('sends a never-sent command without reading its result subject first, and takes the result the watch delivers', async () => {
    const { deps, reads, published } = fakes(undefined);
    const result = await exchangeAgentCommand(deps, command, { deadlineMs: Date.now() + 60_000, signal: new AbortController().signal, neverSent: true });
    expect(result.payload).toEqual({ state: 'On' });
    expect(reads).toEqual([]);
    expect(published).toHaveLength(1);
  });

  it('uses a result already stored for a resumed command without publishing it again', async () => {
    const { deps, reads, published } = fakes(signedResult());
    const result = await exchangeAgentCommand(deps, command, { deadlineMs: Date.now() + 60_000, signal: new AbortController().signal });
    expect(result.payload).toEqual({ state: 'On' });
    expect(reads).toEqual([1]);
    expect(published).toEqual([]);
  });

  it('records the first refused result of each signer and counts the others once, however many there are', async () => {
    const { deps } = fakes(undefined);
    let delivered = 0;
    const garbage = (seq: number) => ({ seq, subject: acceptedSubjectOf(command), data: Buffer.from(`garbage ${seq}`) }) as unknown as StoredMsg;
    // The watch hands over 500 unreadable results before the signed one.
    (deps as { results: unknown }).results = { next: async () => (++delivered <= 500 ? garbage(delivered) : { ...signedResult(), seq: 1_000 }) };
    const recorded: unknown[] = [];
    const counts: { refused: number; sources: { source: string }[] }[] = [];
    const result = await exchangeAgentCommand(deps, command, {
      deadlineMs: Date.now() + 60_000,
      signal: new AbortController().signal,
      neverSent: true,
      onRejected: async (r) => void recorded.push(r),
      onRejectedCount: async (c) => void counts.push(c),
    });
    expect(result.payload).toEqual({ state: 'On' });
    expect(recorded).toEqual([{ commandId: command.commandId, reason: 'MALFORMED', seq: 1, agentId: undefined }]);
    expect(counts).toEqual([expect.objectContaining({ refused: 499, sources: [{ source: 'unreadable', refused: 499, reasons: { MALFORMED: 499 } }] })]);
  });
});
