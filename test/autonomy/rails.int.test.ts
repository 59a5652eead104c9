import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { allOk, policiesWith, signalOf, startAutonomy } from './autonomyFixture.ts';

const operator = { actor: 'token:operator' };

describe('rails', () => {
  it('budget (acceptance 6): N ≫ B concurrent auto decisions over two engines consume exactly B; the rest fail closed to require', async () => {
    await using env = await startAutonomy({ responders: 2 });
    const policies = policiesWith({ retry: { disposition: 'auto' } });
    await env.startEngine({ policies, budget: 5 });
    await env.startEngine({ policies, budget: 5 });
    // Four passes of 20 keys each, published together: the two replicas decide them at the same time.
    await Promise.all(Array.from({ length: 4 }, (_, p) => env.publishPass(Array.from({ length: 20 }, (_, i) => signalOf('node-failed', `b${p * 20 + i}`)))));
    await env.settled(60_000);
    const consumed = await env.eventsOf('bc.evt.autonomy.budget.*', 'BudgetTaken');
    expect(consumed).toHaveLength(5);
    const started = await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionRemediationStarted');
    expect(started).toHaveLength(5);
    const required = await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionApprovalRequired');
    expect(required).toHaveLength(75);
    expect(required[0]!.data.reason).toMatch(/^BUDGET_EXHAUSTED/);
  });

  it('budget: an error on the budget path gives require', async () => {
    await using env = await startAutonomy();
    await env.startEngine({
      policies: policiesWith({ retry: { disposition: 'auto' } }),
      budgetFault: () => {
        throw new Error('injected budget fault');
      },
    });
    await env.pass([signalOf('node-failed', 'f1')]);
    expect(await env.decision(decisionIdOf('retry', 'f1'))).toMatchObject({ status: 'pending', disposition: 'require' });
    expect(await env.eventsOf('bc.evt.autonomy.budget.*')).toHaveLength(0);
    const [required] = await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionApprovalRequired');
    expect(required!.data.reason).toContain('injected budget fault');
  });

  it('outcomes (acceptance 7): a crashed sensor never yields effective; 3 ineffective outcomes escalate to require', async () => {
    await using env = await startAutonomy();
    await env.startEngine({ policies: policiesWith({ retry: { disposition: 'auto' } }) });
    const id = decisionIdOf('retry', 'e1');
    const notes: string[] = [];
    const sub = env.nc.subscribe('bc.notify.metal', { callback: (_e, m) => void notes.push(m.json<{ kind: string }>().kind) });
    const crashed = allOk.map((r) => (r.sensor === 'node-state' ? { sensor: 'node-state', ok: false as const, error: 'boom' } : r));
    await env.pass([signalOf('node-failed', 'e1')]);
    expect(await env.decision(id)).toMatchObject({ status: 'running', episode: 1 });
    // The signal is absent only because its sensor crashed: nothing is concluded, however often.
    await env.pass([], crashed);
    await env.pass([], crashed);
    expect(await env.decision(id)).toMatchObject({ status: 'running', episode: 1 });
    expect(await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionOutcomeRecorded')).toHaveLength(0);
    // Signal still there with the sensor ok: ineffective. Three episodes of that escalate.
    for (let episode = 1; episode <= 3; episode++) {
      await env.pass([signalOf('node-failed', 'e1')]);
      expect(await env.decision(id)).toMatchObject({ status: 'closed', ineffectiveStreak: episode, escalated: episode === 3 });
      if (episode < 3) {
        await env.pass([signalOf('node-failed', 'e1')]);
        expect(await env.decision(id)).toMatchObject({ status: 'running', episode: episode + 1 });
      }
    }
    await env.pass([signalOf('node-failed', 'e1')]);
    expect(await env.decision(id)).toMatchObject({ status: 'pending', episode: 4, disposition: 'require' });
    const outcomes = await env.eventsOf('bc.evt.autonomy.decision.*', 'DecisionOutcomeRecorded');
    expect(outcomes.every((o) => o.data.effective === false)).toBe(true);
    await env.nc.flush();
    expect(notes).toEqual(['escalated', 'approval-requested']);
    sub.unsubscribe();
  });

  it('pause and halt (acceptance 8): a paused owner starts nothing new within one pass while others go on; halt stops all', async () => {
    await using env = await startAutonomy();
    // Retry declared under another owner for this test, so two owners have runnable auto lanes.
    await env.startEngine({ policies: policiesWith({ retry: { disposition: 'auto', owner: 'trust' } }) });
    await env.bus.execute({ name: 'autonomy.pause', payload: { owner: 'metal', paused: true }, ...operator });
    await env.pass([signalOf('bmc-unreachable', 'm1'), signalOf('node-failed', 't1')]);
    expect(await env.decision(decisionIdOf('maintenance', 'm1'))).toMatchObject({ status: 'approved' });
    expect(await env.decision(decisionIdOf('retry', 't1'))).toMatchObject({ status: 'running' });
    await env.bus.execute({ name: 'autonomy.halt', payload: { halted: true, reason: 'incident' }, ...operator });
    await env.bus.execute({ name: 'autonomy.pause', payload: { owner: 'metal', paused: false }, ...operator });
    await env.pass([signalOf('bmc-unreachable', 'm1'), signalOf('node-failed', 't2')]);
    expect(await env.decision(decisionIdOf('maintenance', 'm1'))).toMatchObject({ status: 'approved' });
    expect(await env.decision(decisionIdOf('retry', 't2'))).toMatchObject({ status: 'approved' });
    await env.bus.execute({ name: 'autonomy.halt', payload: { halted: false }, ...operator });
    await env.pass([signalOf('bmc-unreachable', 'm1'), signalOf('node-failed', 't2')]);
    expect(await env.decision(decisionIdOf('maintenance', 'm1'))).toMatchObject({ status: 'running' });
    expect(await env.decision(decisionIdOf('retry', 't2'))).toMatchObject({ status: 'running' });
  });
});
