import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { approvalMessage, decisionApprovalMessage } from '../../schemas/trust/approvals.ts';
import { importApproverKey, signDecisionApproval, signVerdict } from '../../services/console/app/src/approvals/approverKey.ts';

describe('console approval signing', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const request = { decisionId: 'dec-000000000000000000000001', episode: 2, expiresAt: '2026-12-02T16:00:00.000Z', planDigest: 'a'.repeat(64) };

  it('signs with WebCrypto exactly the texts the deciders verify: a batch digest, and one episode of a decision', async () => {
    const key = await importApproverKey('alice', pem);
    const batch = await signVerdict(key, 'reject', 'b'.repeat(64));
    expect(verify(null, approvalMessage('reject', 'b'.repeat(64)), publicKey, Buffer.from(batch, 'base64'))).toBe(true);
    const decision = await signDecisionApproval(key, request);
    expect(verify(null, decisionApprovalMessage('approve', request), publicKey, Buffer.from(decision, 'base64'))).toBe(true);
    expect(verify(null, decisionApprovalMessage('approve', { ...request, episode: 3 }), publicKey, Buffer.from(decision, 'base64'))).toBe(false);
  });
});
