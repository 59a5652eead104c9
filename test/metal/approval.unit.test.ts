import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { approvalMessage } from '../../schemas/trust/approvals.ts';
import { builtinProfiles } from '../../services/metal/profiles/builtin.ts';
import { approveBatch } from '../../services/workflow/workflow/approve.ts';
import { startWorkflow } from '../../services/workflow/workflow/start.ts';
import { approvalStatus, workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { deployPayload } from './engineFixture.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(workflowAggregate);
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const alice = { approverId: 'alice', publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
const quorum = (threshold: number) => ({ dependencies: { quorum: { approvers: [alice], threshold, approvalTtlSeconds: 600 } } });
const wf = 'wf-00000000000c';
const { nodeId: _n, ...inputs } = deployPayload('n1');
const start = { workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation: 'deploy' as const, inputs };

describe('approval batches', () => {
  it('opens a batch over the destructive steps only when a quorum is configured, with a digest that covers the params', () => {
    const without = given([])
      .when(startWorkflow, start, quorum(0))
      .then((e) => expect(e.map((x) => x.type)).toEqual(['WorkflowStarted', 'StepScheduled']));
    expect(without).toHaveLength(2);
    const opened = given([])
      .when(startWorkflow, start, quorum(1))
      .then((e) => expect(e.map((x) => x.type)).toEqual(['WorkflowStarted', 'ApprovalRequested', 'StepScheduled']));
    const requested = opened[1] as Extract<WorkflowEvent, { type: 'ApprovalRequested' }>;
    const steps = resolveSteps(builtinProfiles.deploy, inputs);
    expect(requested.data.items).toEqual(steps.flatMap((s, stepIndex) => (s.destructive ? [{ stepIndex, stepId: s.id }] : [])));
    // Another image is another batch: an approval of one cannot carry over.
    const other = given([])
      .when(startWorkflow, { ...start, inputs: { ...inputs, imageSha256: 'b'.repeat(64) } }, quorum(1))
      .then(() => undefined);
    expect((other[1] as typeof requested).data.digest).not.toBe(requested.data.digest);
    expect(requested.data.expiresAt).toBe('2026-12-02T12:10:00.000Z');
  });

  it('expires: no approval after expiresAt, and the steps of an expired batch may not run', () => {
    const opened = given([])
      .when(startWorkflow, start, quorum(1))
      .then(() => undefined);
    const requested = opened[1] as Extract<WorkflowEvent, { type: 'ApprovalRequested' }>;
    const expired = { ...requested, data: { ...requested.data, expiresAt: '2026-12-02T11:59:59.000Z' } };
    const signature = sign(null, approvalMessage('approve', requested.data.digest), privateKey).toString('base64');
    given([opened[0]!, expired]).when(approveBatch, { workflowId: wf, approverId: 'alice', signature }, quorum(1)).thenRejects('APPROVAL_EXPIRED');
    const state = given([opened[0]!, expired]).state;
    if (!state.exists) throw new Error('no state');
    expect(approvalStatus(state, 1, Date.parse('2026-12-02T12:00:00.000Z'))).toBe('expired');
    expect(approvalStatus(state, 0, Date.parse('2026-12-02T12:00:00.000Z'))).toBe('not-needed');
    const granted = given([opened[0]!, requested])
      .when(approveBatch, { workflowId: wf, approverId: 'alice', signature }, quorum(1))
      .then(() => undefined);
    const approved = given([opened[0]!, requested, ...granted]).state;
    if (!approved.exists) throw new Error('no state');
    // Approved in time stays approved: the approvals were valid when they were given.
    expect(approvalStatus(approved, 1, Date.parse('2026-12-03T00:00:00.000Z'))).toBe('approved');
  });
});
