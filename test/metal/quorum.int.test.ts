import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AgentCommandKinds } from '../../schemas/agent/agentCommand.ts';
import { approvalMessage } from '../../schemas/trust/approvals.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { storedAgentCommands } from '../support/agentEvidence.ts';
import { deployPayload, enrollPayload, startEngine } from './engineFixture.ts';
import { startFakeAgent } from './fakeAgent.ts';

type Engine = Awaited<ReturnType<typeof startEngine>>;

function approver(approverId: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
  return { approverId, publicKey: raw, privateKey };
}
const signed = (key: KeyObject, verdict: 'approve' | 'reject', digest: string) => sign(null, approvalMessage(verdict, digest), key).toString('base64');

async function readyWithQuorum(env: Engine, approvers: ReturnType<typeof approver>[], threshold: number, approvalTtlSeconds = 3_600) {
  await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
  await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
  await env.waitForNode('n1', (s) => s.exists && s.state === 'ready');
  await env.bus.execute({
    name: 'pki.setApprovers',
    payload: { approvers: approvers.map(({ approverId, publicKey }) => ({ approverId, publicKey })), threshold, approvalTtlSeconds },
    actor: 'test',
  });
  const deploy = await env.bus.execute({ name: 'metal.deploy', payload: deployPayload('n1'), actor: 'test' });
  const workflowId = (deploy.events[0]!.data as { workflowId: string }).workflowId;
  const wf = async () => {
    const s = (await env.bus.repository.load(workflowAggregate, workflowId)).state;
    if (!s.exists) throw new Error('no workflow yet');
    return s;
  };
  await expect.poll(async () => (await wf().catch(() => undefined))?.approval?.digest, { timeout: 10_000 }).toBeTruthy();
  return { workflowId, wf };
}

const destructiveSent = async (env: Engine, workflowId: string) =>
  (await storedAgentCommands(env.nc)).filter(
    (c) => c.commandId.startsWith(`${workflowId}-`) && AgentCommandKinds[c.kind as keyof typeof AgentCommandKinds].destructive,
  );

describe('quorum for destructive commands', () => {
  it('holds every destructive command of a deploy until M distinct approvers signed, then runs it to the end', { timeout: 60_000 }, async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const [alice, bob, carol] = [approver('alice'), approver('bob'), approver('carol')];
    const { workflowId, wf } = await readyWithQuorum(env, [alice, bob, carol], 2);
    const { digest, stepIndexes, threshold } = (await wf()).approval!;
    expect(threshold).toBe(2);
    expect(stepIndexes).toEqual([1, 3, 6]); // power.set, image.write, power.set

    // The non-destructive first step runs; the first destructive one waits unstarted, and nothing destructive is sent.
    await expect.poll(async () => (await wf()).progress[0]!.status, { timeout: 10_000 }).toBe('succeeded');
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await wf()).progress[1]!.status).toBe('scheduled');
    expect(await destructiveSent(env, workflowId)).toEqual([]);

    // Refusals: a forged signature, an approval signed as a rejection, an unknown approver.
    const approve = (approverId: string, signature: string) =>
      env.bus.execute({ name: 'workflow.approve', payload: { workflowId, approverId, signature }, actor: 'test' });
    await expect(approve('alice', signed(bob.privateKey, 'approve', digest))).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    await expect(approve('alice', signed(alice.privateKey, 'reject', digest))).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    await expect(approve('mallory', signed(alice.privateKey, 'approve', digest))).rejects.toMatchObject({ code: 'APPROVER_UNKNOWN' });

    // One approver, twice, is still one.
    await approve('alice', signed(alice.privateKey, 'approve', digest));
    expect((await approve('alice', signed(alice.privateKey, 'approve', digest))).events).toEqual([]);
    await new Promise((r) => setTimeout(r, 3_500));
    expect(await destructiveSent(env, workflowId)).toEqual([]);

    await approve('carol', signed(carol.privateKey, 'approve', digest));
    await env.waitForNode('n1', (s) => s.exists && s.state === 'deployed');
    expect((await destructiveSent(env, workflowId)).map((c) => c.kind)).toEqual(['power.set', 'image.write', 'power.set']);
    const granted = [];
    for await (const b of env.store.readAfter(`bc.evt.metal.workflow.${workflowId}`, 0))
      granted.push(...b.batch.events.filter((e) => e.type === 'ApprovalGranted'));
    expect(granted.map((e) => [(e.data as { approverId: string }).approverId, e.metadata.actor])).toEqual([
      ['alice', 'test'],
      ['carol', 'test'],
    ]);
  });

  it('fails the workflow on a signed rejection without sending anything destructive, and takes no approval after it', { timeout: 60_000 }, async () => {
    await using env = await startEngine();
    await using _agent = await startFakeAgent(env.nc, 'dc1');
    const alice = approver('alice');
    const { workflowId, wf } = await readyWithQuorum(env, [alice], 1);
    const { digest } = (await wf()).approval!;
    await env.bus.execute({
      name: 'workflow.reject',
      payload: { workflowId, approverId: 'alice', signature: signed(alice.privateKey, 'reject', digest), reason: 'wrong image' },
      actor: 'test',
    });
    const failed = await env.waitForNode('n1', (s) => s.exists && s.state === 'failed');
    expect(failed).toMatchObject({ failed: { reason: 'rejected by alice: wrong image' } });
    expect(await destructiveSent(env, workflowId)).toEqual([]);
    await expect(
      env.bus.execute({
        name: 'workflow.approve',
        payload: { workflowId, approverId: 'alice', signature: signed(alice.privateKey, 'approve', digest) },
        actor: 'test',
      }),
    ).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
  });
});
