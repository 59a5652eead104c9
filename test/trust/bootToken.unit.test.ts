import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bootTokenRequestSignedBy, signBootTokenRequest } from '../../schemas/trust/bootToken.ts';
import type { ExistingWorkflow, StepProgress } from '../../services/workflow/workflow/workflow.ts';
import { awaitsRamdiskJoin } from '../../services/trust/join/bootTokenService.ts';

const steps = ['boot.setOnce', 'power.set', 'wait.agentJoined', 'image.write', 'power.set'];
const progress = (done: number, current: StepProgress['status'] = 'running'): StepProgress[] =>
  steps.map((_, i) => ({
    status: i < done ? 'succeeded' : i === done ? current : 'pending',
    attempt: 1,
    output: null,
    error: null,
    attemptStartedAt: null,
    nonce: null,
  }));
const workflow = (done: number, status: ExistingWorkflow['status'] = 'running', current: StepProgress['status'] = 'running') =>
  ({
    exists: true,
    workflowId: 'wf1',
    nodeId: 'n1',
    siteId: 'dc1',
    operation: 'deploy',
    profile: { id: 'deploy', version: 1 },
    steps: steps.map((id) => ({ id, runsOn: 'site', params: {}, timeoutMs: 1000, retry: { maxAttempts: 1 }, destructive: false })),
    progress: progress(done, current),
    status,
    startedAt: '2026-01-01T00:00:00Z',
  }) as unknown as ExistingWorkflow;

describe('boot join tokens', () => {
  it('are due only while the power cycle that PXE-boots the ramdisk, or the wait for it, is the current step', () => {
    expect([0, 1, 2, 3, 4].map((done) => awaitsRamdiskJoin(workflow(done)))).toEqual([false, true, true, false, false]);
    expect(awaitsRamdiskJoin(workflow(1, 'running', 'scheduled'))).toBe(true);
    expect(awaitsRamdiskJoin(workflow(2, 'failed', 'failed'))).toBe(false);
    expect(awaitsRamdiskJoin(workflow(5, 'completed'))).toBe(false);
    expect(awaitsRamdiskJoin({ exists: false })).toBe(false);
  });

  it('a request verifies only against the key that signed it, and not once altered', () => {
    const signer = generateKeyPairSync('ed25519');
    const raw = Buffer.from(signer.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const other = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const signed = signBootTokenRequest(
      {
        agentId: 'site-dc1',
        nodeId: 'n1',
        issuedAt: '2026-01-01T00:00:00.000Z',
        boot: { workflowId: 'wf1', stepIndex: 1, attempt: 1, ticketId: 'T'.repeat(43) },
      },
      { privateKey: signer.privateKey, publicKeyRaw: raw },
    );
    expect(bootTokenRequestSignedBy(signed, raw.toString('base64'))).toBe(true);
    expect(bootTokenRequestSignedBy(signed, other.toString('base64'))).toBe(false);
    const altered = {
      ...signed,
      request: Buffer.from(JSON.stringify({ agentId: 'site-dc1', nodeId: 'n2', issuedAt: '2026-01-01T00:00:00.000Z' })).toString('base64'),
    };
    expect(bootTokenRequestSignedBy(altered, raw.toString('base64'))).toBe(false);
  });
});
