import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { nodeOperationPlan, PLAN_ACTION_INPUT, PLAN_DIGEST_INPUT, planDigestOf } from '../../schemas/autonomy/plan.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { enrollPayload } from '../metal/engineFixture.ts';
import { allOk, policiesWith, signalOf, startAutonomy } from './autonomyFixture.ts';

const operator = { actor: 'token:operator' };
const thrownCode = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (err: { code?: string }) => err.code,
  );

describe('dispositions, refusals and the approved plan (acceptance 3, 4)', () => {
  it('auto acts, notify tells, require asks, block refuses; undeclared and control-plane targets are refused', async () => {
    await using env = await startAutonomy();
    const notes: string[] = [];
    const sub = env.nc.subscribe('bc.notify.>', { callback: (_e, m) => void notes.push(`${m.subject} ${m.json<{ kind: string }>().kind}`) });
    await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, ...operator });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), ...operator });
    await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n2'), ...operator });
    // n2's maintenance is the operator's: the engine never clears it.
    await env.bus.execute({ name: 'metal.setMaintenance', payload: { nodeId: 'n2', on: true, reason: 'cabling' }, ...operator });
    await env.bus.execute({ name: 'autonomy.setPolicy', payload: { category: 'recreate', disposition: 'block' }, ...operator });
    expect(await thrownCode(env.bus.execute({ name: 'autonomy.setPolicy', payload: { category: 'reimage', disposition: 'auto' }, ...operator }))).toBe(
      'NOT_PERMITTED',
    );
    await env.startEngine();

    await env.pass([
      signalOf('bmc-unreachable', 'n1'),
      signalOf('bmc-unreachable', 'n2'),
      signalOf('node-failed', 'n3'),
      signalOf('step-overdue', 'wf-000000000001', { target: { type: 'workflow', id: 'wf-000000000001' } }),
      signalOf('instance-error', 'i1'),
      signalOf('node-failed', 'cp1', { controlPlane: true }),
      { ...signalOf('node-failed', 'n9'), kind: 'disk-smart' },
    ]);
    const n1 = (await env.bus.repository.load(nodeAggregate, 'n1')).state;
    expect(n1).toMatchObject({ maintenance: true, maintenanceSource: 'bmc' });
    expect(await env.decision(decisionIdOf('maintenance', 'n1'))).toMatchObject({ status: 'running', disposition: 'auto' });
    expect(await env.decision(decisionIdOf('retry', 'n3'))).toMatchObject({ status: 'pending', disposition: 'require' });
    expect(await env.decision(decisionIdOf('observation', 'wf-000000000001'))).toMatchObject({ status: 'notified' });
    expect(await env.decision(decisionIdOf('recreate', 'i1'))).toMatchObject({ status: 'blocked', disposition: 'block' });
    expect(await env.decision(decisionIdOf('retry', 'cp1'))).toEqual({ exists: false });
    expect((await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionOpened')).length).toBe(5);
    await sleep(50);
    expect(notes.sort()).toEqual(['bc.notify.metal approval-requested', 'bc.notify.operations notify', 'bc.notify.vps block']);

    // The BMC answers again: the engine clears the maintenance the BMC lane set, and only that.
    await env.pass([signalOf('node-failed', 'n3')]);
    expect((await env.bus.repository.load(nodeAggregate, 'n1')).state).toMatchObject({ maintenance: false });
    expect((await env.bus.repository.load(nodeAggregate, 'n2')).state).toMatchObject({ maintenance: true, maintenanceSource: 'operator' });
    expect(await env.decision(decisionIdOf('maintenance', 'n1'))).toMatchObject({ status: 'closed', closedReason: 'outcome' });
    expect(await env.decision(decisionIdOf('observation', 'wf-000000000001'))).toMatchObject({ status: 'closed', closedReason: 'resolved' });

    // A steady fleet: the same signals again append nothing (the first pass re-opens i1, whose signal came back).
    await env.pass([signalOf('node-failed', 'n3'), signalOf('instance-error', 'i1')]);
    const before = await env.store.streamLastSequence();
    await env.pass([signalOf('node-failed', 'n3'), signalOf('instance-error', 'i1')]);
    await env.pass([signalOf('node-failed', 'n3'), signalOf('instance-error', 'i1')]);
    expect(await env.store.streamLastSequence()).toBe(before);
    sub.unsubscribe();
  });

  it('expires an unapproved request before deciding, refuses a late approval, cools down, then opens exactly one new episode', async () => {
    await using env = await startAutonomy();
    await env.startEngine({ policies: policiesWith({ retry: { approvalTimeoutMs: 300, cooldownMs: 1_500 } }) });
    const id = decisionIdOf('retry', 'n5');
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ status: 'pending', episode: 1 });
    await sleep(400);
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ status: 'closed', closedReason: 'expired', episode: 1 });
    expect(await thrownCode(env.bus.execute({ name: 'autonomy.approve', payload: { decisionId: id }, actor: 'token:approver' }))).toBe('APPROVAL_EXPIRED');
    // In cooldown: the signal opens nothing.
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ episode: 1, status: 'closed' });
    await sleep(1_600);
    await env.pass([signalOf('node-failed', 'n5')]);
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ episode: 2, status: 'pending' });
    // Rejected: cooldown again, then exactly one more episode.
    await env.bus.execute({ name: 'autonomy.reject', payload: { decisionId: id, reason: 'not this week' }, actor: 'token:approver' });
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ episode: 2, status: 'closed', closedReason: 'rejected' });
    await sleep(1_600);
    await env.pass([signalOf('node-failed', 'n5')]);
    await env.pass([signalOf('node-failed', 'n5')]);
    expect(await env.decision(id)).toMatchObject({ episode: 3, status: 'pending' });
    expect(await env.eventsOf(`bc.evt.autonomy.decision.${id}`, 'DecisionOpened')).toHaveLength(3);
  });

  it('workflow.start refuses a plan whose digest is not the approved one', async () => {
    await using env = await startAutonomy();
    const base = { workflowId: 'wf-00000000000a', nodeId: 'n1', siteId: 'dc1', operation: 'inspect' as const };
    const approved = planDigestOf(nodeOperationPlan('metal.retry', 'n1', 'deploy'));
    const tampered = { ...base, inputs: { [PLAN_DIGEST_INPUT]: approved, [PLAN_ACTION_INPUT]: 'metal.retry' } };
    expect(await thrownCode(env.bus.execute({ name: 'workflow.start', payload: tampered, actor: 'engine' }))).toBe('PLAN_DIGEST_MISMATCH');
    expect(await env.store.lastSequence(Subjects.aggregateEvents('metal', 'workflow', base.workflowId))).toBe(0);
    void allOk;
  });
});
