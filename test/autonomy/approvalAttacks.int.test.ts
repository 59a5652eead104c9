import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { DecisionView } from '../../schemas/autonomy/views.ts';
import { approvalMessage, decisionApprovalMessage } from '../../schemas/trust/approvals.ts';
import { deployPayload } from '../metal/engineFixture.ts';
import { startApi } from '../support/apiFixture.ts';
import { openRetry } from './fixtures.ts';

/**
 * Issue 31, findings 2, 3 and 12 (admin tokens at the approval routes), each performed over HTTP with what the
 * attacker holds: an approver's API token (and an approval an approver once signed), or an admin token.
 */
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const id = decisionIdOf('retry', 'n1');
const engine = { actor: 'engine' };

function approverKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}
const signDecision = (key: KeyObject, d: DecisionView) => sign(null, decisionApprovalMessage('approve', d), key).toString('base64');

async function setUp() {
  const env = await startApi();
  const { app } = env;
  const token = async (tokenId: string, role: string) =>
    (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role } })).json().token as string;
  const alice = approverKey();
  return Object.assign(env, {
    alice,
    approverToken: await token('appr-1', 'approver'),
    /** Another approver's token: someone who can reach the approval routes but holds no approver key. */
    mallory: await token('appr-2', 'approver'),
    setQuorum: () =>
      app.inject({
        method: 'POST',
        url: '/v1/commands/pki.setApprovers',
        payload: { approvers: [{ approverId: 'alice', publicKey: alice.publicKey }], threshold: 1 },
      }),
    async open(): Promise<DecisionView> {
      const opened = await env.bus.execute({ name: 'autonomy.openDecision', payload: openRetry(), ...engine });
      return (await app.inject({ url: `/v1/autonomy/decisions/${id}?minSeq=${opened.seq}` })).json();
    },
    approve: (token: string, body: object) =>
      app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${id}/approve`, payload: body, headers: bearer(token) }),
    decisionEvents: async () =>
      (await app.inject({ url: `/v1/events?aggregate=autonomy.decision/${id}` })).json().items as {
        type: string;
        data: Record<string, unknown>;
        metadata: { actor: string };
      }[],
  });
}

describe('autonomy approvals are bound to what they approve (issue 31)', () => {
  it('refuses a signature an approver gave for an earlier episode of the same plan (finding 2)', async () => {
    await using env = await setUp();
    await env.setQuorum();
    const first = await env.open();
    expect(first).toMatchObject({ episode: 1, status: 'pending' });
    const givenForFirst = signDecision(env.alice.privateKey, first);
    expect((await env.approve(env.approverToken, { signature: { approverId: 'alice', signature: givenForFirst } })).statusCode).toBe(201);
    // The engine ran it; it did not help, so the key opens its next episode with the very same plan.
    await env.bus.execute({
      name: 'autonomy.recordStarted',
      payload: { decisionId: id, episode: 1, commandName: 'metal.retry', commandId: 'c-1', settleMs: 0 },
      ...engine,
    });
    await env.bus.execute({
      name: 'autonomy.recordOutcome',
      payload: { decisionId: id, episode: 1, passId: 'p2', signalPresent: true, sensorOk: true },
      ...engine,
    });
    const second = await env.open();
    expect(second).toMatchObject({ episode: 2, status: 'pending', planDigest: first.planDigest });

    const replayed = await env.approve(env.mallory, { signature: { approverId: 'alice', signature: givenForFirst } });
    expect([replayed.statusCode, replayed.json().code]).toEqual([403, 'APPROVAL_SIGNATURE_INVALID']);
    // Another deadline is another request, too.
    const otherExpiry = signDecision(env.alice.privateKey, { ...second, expiresAt: new Date(Date.parse(second.expiresAt!) + 3_600_000).toISOString() });
    expect((await env.approve(env.mallory, { signature: { approverId: 'alice', signature: otherExpiry } })).json().code).toBe('APPROVAL_SIGNATURE_INVALID');
    expect((await env.decisionEvents()).filter((e) => e.type === 'DecisionApproved')).toHaveLength(1);

    const approved = await env.approve(env.approverToken, { signature: { approverId: 'alice', signature: signDecision(env.alice.privateKey, second) } });
    expect(approved.json().events).toEqual(['DecisionApprovalRecorded', 'DecisionApproved']);
  });

  it('without a quorum, records the approving token and refuses a claimed signature it cannot verify (finding 3)', async () => {
    await using env = await setUp();
    await env.open();
    const before = (await env.decisionEvents()).length;
    const claimed = await env.approve(env.mallory, { signature: { approverId: 'alice', signature: Buffer.alloc(64, 7).toString('base64') } });
    expect([claimed.statusCode, claimed.json().code]).toEqual([403, 'APPROVER_UNKNOWN']);
    expect(await env.decisionEvents()).toHaveLength(before);

    expect((await env.approve(env.mallory, {})).statusCode).toBe(201);
    const recorded = (await env.decisionEvents()).find((e) => e.type === 'DecisionApprovalRecorded')!;
    expect(recorded).toMatchObject({ data: { approverId: 'token:appr-2', signed: false }, metadata: { actor: 'token:appr-2' } });
  });

  it('lets admin tokens answer autonomy requests only while no quorum is set, and workflow batches never (item 12)', async () => {
    await using env = await setUp();
    const { app } = env;
    await env.open();
    const asAdmin = await app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${id}/approve`, payload: {} });
    expect(asAdmin.statusCode).toBe(201);
    expect((await env.decisionEvents()).find((e) => e.type === 'DecisionApprovalRecorded')).toMatchObject({
      data: { approverId: 'token:bootstrap-admin', signed: false },
    });

    await env.setQuorum();
    const other = decisionIdOf('retry', 'n2');
    const opened = await env.bus.execute({ name: 'autonomy.openDecision', payload: openRetry('n2'), ...engine });
    const pending: DecisionView = (await app.inject({ url: `/v1/autonomy/decisions/${other}?minSeq=${opened.seq}` })).json();
    // Even carrying a valid approver signature, an admin token is not an approver's.
    const signature = { approverId: 'alice', signature: signDecision(env.alice.privateKey, pending) };
    const refused = await app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${other}/approve`, payload: { signature } });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'FORBIDDEN']);
    const rejectRefused = await app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${other}/reject`, payload: { reason: 'no' } });
    expect([rejectRefused.statusCode, rejectRefused.json().code]).toEqual([403, 'FORBIDDEN']);

    const workflowId = 'wf-0000000000ab';
    const { nodeId: _n, ...inputs } = deployPayload('n1');
    const started = await env.bus.execute({
      name: 'workflow.start',
      payload: { workflowId, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', inputs },
      actor: 'test',
    });
    const batch = (await app.inject({ url: `/v1/approvals/${workflowId}?minSeq=${started.seq}` })).json();
    const batchSignature = sign(null, approvalMessage('approve', batch.digest), env.alice.privateKey).toString('base64');
    const workflowRefused = await app.inject({
      method: 'POST',
      url: `/v1/approvals/${workflowId}/approve`,
      payload: { approverId: 'alice', signature: batchSignature },
    });
    expect([workflowRefused.statusCode, workflowRefused.json().code]).toEqual([403, 'FORBIDDEN']);
    expect((await app.inject({ url: `/v1/approvals/${workflowId}` })).json()).toMatchObject({ state: 'pending', grantedBy: [] });
    // The approver's own token, with the same signatures, is what counts.
    expect(
      (await app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${other}/approve`, payload: { signature }, headers: bearer(env.approverToken) }))
        .statusCode,
    ).toBe(201);
  });
});
