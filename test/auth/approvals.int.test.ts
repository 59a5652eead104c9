import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { approvalMessage } from '../../schemas/trust/approvals.ts';
import { deployPayload } from '../metal/engineFixture.ts';
import { startApi } from '../support/apiFixture.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('approvals over HTTP', () => {
  it('lists pending batches, takes signed approvals from approvers only, and keeps the approver set the admin’s', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app } = env;
    const token = async (tokenId: string, role: string) =>
      (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId, role } })).json().token as string;
    const [approverToken, operatorToken] = [await token('appr1', 'approver'), await token('op1', 'operator')];
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const approvers = {
      approvers: [{ approverId: 'alice', publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') }],
      threshold: 1,
    };

    const byOperator = await app.inject({ method: 'POST', url: '/v1/commands/pki.setApprovers', payload: approvers, headers: bearer(operatorToken) });
    expect([byOperator.statusCode, byOperator.json().code]).toEqual([403, 'FORBIDDEN']);
    expect((await app.inject({ method: 'POST', url: '/v1/commands/pki.setApprovers', payload: approvers })).statusCode).toBe(201);

    // A workflow that sends destructive commands opens its batch (started here directly, as the orchestrator would).
    const workflowId = 'wf-0000000000aa';
    const { nodeId: _n, ...inputs } = deployPayload('n1');
    const started = await env.bus.execute({
      name: 'workflow.start',
      payload: { workflowId, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', inputs },
      actor: 'test',
    });
    const pending = (await app.inject({ url: `/v1/approvals?state=pending&minSeq=${started.seq}`, headers: bearer(approverToken) })).json();
    expect(pending.items).toHaveLength(1);
    expect(pending.items[0]).toMatchObject({ workflowId, nodeId: 'n1', state: 'pending', threshold: 1, approverIds: ['alice'], grantedBy: [] });
    const signature = sign(null, approvalMessage('approve', pending.items[0].digest), privateKey).toString('base64');

    const asOperator = await app.inject({
      method: 'POST',
      url: `/v1/approvals/${workflowId}/approve`,
      payload: { approverId: 'alice', signature },
      headers: bearer(operatorToken),
    });
    expect([asOperator.statusCode, asOperator.json().code]).toEqual([403, 'FORBIDDEN']);
    const forged = await app.inject({
      method: 'POST',
      url: `/v1/approvals/${workflowId}/approve`,
      payload: { approverId: 'alice', signature: Buffer.alloc(64).toString('base64') },
      headers: bearer(approverToken),
    });
    expect([forged.statusCode, forged.json().code]).toEqual([403, 'APPROVAL_SIGNATURE_INVALID']);
    const approved = await app.inject({
      method: 'POST',
      url: `/v1/approvals/${workflowId}/approve`,
      payload: { approverId: 'alice', signature },
      headers: bearer(approverToken),
    });
    expect(approved.statusCode).toBe(201);
    const after = (await app.inject({ url: `/v1/approvals/${workflowId}?minSeq=${approved.json().seq}` })).json();
    expect(after).toMatchObject({ state: 'approved', grantedBy: ['alice'] });
    const history = (await app.inject({ url: `/v1/events?aggregate=metal.workflow/${workflowId}` })).json();
    expect(history.items.find((e: { type: string }) => e.type === 'ApprovalGranted')).toMatchObject({
      data: { approverId: 'alice' },
      metadata: { actor: 'token:appr1' },
    });
  });
});

describe('join tokens over HTTP', () => {
  it('mints a single-use token for admins only, answered once and stored only as a hash', { timeout: 60_000 }, async () => {
    await using env = await startApi();
    const { app } = env;
    const operatorToken = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'op1', role: 'operator' } })).json().token as string;
    await app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    const refused = await app.inject({ method: 'POST', url: '/v1/join-tokens', payload: { role: 'site', siteId: 'dc1' }, headers: bearer(operatorToken) });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'FORBIDDEN']);
    const bad = await app.inject({ method: 'POST', url: '/v1/join-tokens', payload: { role: 'ramdisk', siteId: 'dc1' } });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'VALIDATION_FAILED']);
    const minted = await app.inject({ method: 'POST', url: '/v1/join-tokens', payload: { role: 'site', siteId: 'dc1', ttlSeconds: 600 } });
    expect(minted.statusCode).toBe(201);
    const { token, tokenId } = minted.json();
    expect(token).toMatch(new RegExp(`^bcj_${tokenId}_`));
    const history = (await app.inject({ url: `/v1/events?aggregate=trust.joinToken/${tokenId}` })).json();
    expect(history.items.map((e: { type: string }) => e.type)).toEqual(['JoinTokenCreated']);
    // The secret is everything after the id: base64url, so it may hold "_" itself.
    const secret = (token as string).slice(`bcj_${tokenId}_`.length);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(history)).not.toContain(secret);
  });
});
