import { describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { AutonomyEngine } from '../../services/processes/autonomyEngine/engine.ts';
import { startApi } from '../support/apiFixture.ts';
import { openReadModel } from '../support/readModelDb.ts';
import { policiesWith, signalOf } from './autonomyFixture.ts';
import { publishPassOn, waitForEngine } from './passes.ts';
import { allOk } from './autonomyFixture.ts';

const tables = ['autonomy_decisions', 'autonomy_history', 'autonomy_budgets', 'autonomy_budget_uses', 'autonomy_overrides', 'autonomy_paused', 'autonomy_halt'];
const dump = (dataDir: string) => {
  using db = openReadModel(dataDir, 'autonomy');
  return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));
};

describe('autonomy surfaces', () => {
  it('serves decisions, history, budgets, policies and passes; approvers approve over HTTP; a rebuild gives the same database (acceptance 9)', async () => {
    await using env = await startApi();
    const responder = serveCommands(env.nc, env.bus, env.log);
    const engine = new AutonomyEngine(
      env.nc,
      env.store,
      {
        policies: policiesWith({ maintenance: { disposition: 'auto' } }),
        bindings: firstLaneBindings,
        sensors: firstLaneSensors,
        settleMs: 0,
        budget: 3,
        budgetWindowMs: 3_600_000,
      },
      env.log,
    );
    await engine.start();
    try {
      const op = async (url: string, payload: object) => (await env.app.inject({ method: 'POST', url, payload })).json();
      await op('/v1/commands/autonomy.setPolicy', { category: 'recreate', disposition: 'block' });
      await op('/v1/commands/autonomy.pause', { owner: 'vps', paused: true, reason: 'provider maintenance' });
      await publishPassOn(
        env.nc,
        [signalOf('node-failed', 'n1'), signalOf('node-failed', 'n2'), signalOf('bmc-unreachable', 'n3'), signalOf('instance-error', 'i1')],
        allOk,
      );
      await waitForEngine(env.nc);
      const seq = await env.store.streamLastSequence();

      const pending = (await env.app.inject({ url: `/v1/autonomy/decisions?status=pending&minSeq=${seq}` })).json();
      expect(pending.items.map((d: { key: string }) => d.key).sort()).toEqual(['n1', 'n2']);
      expect(pending.items[0]).toMatchObject({ category: 'retry', owner: 'metal', disposition: 'require', plan: { action: 'metal.retry' } });

      const approved = await env.app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${decisionIdOf('retry', 'n1')}/approve`, payload: {} });
      expect(approved.statusCode).toBe(201);
      expect(approved.json().events).toEqual(['DecisionApprovalRecorded', 'DecisionApproved']);
      const rejected = await env.app.inject({
        method: 'POST',
        url: `/v1/autonomy/decisions/${decisionIdOf('retry', 'n2')}/reject`,
        payload: { reason: 'wrong rack' },
      });
      expect(rejected.statusCode).toBe(201);
      const again = await env.app.inject({ method: 'POST', url: `/v1/autonomy/decisions/${decisionIdOf('retry', 'n2')}/approve`, payload: {} });
      expect(again.json()).toMatchObject({ code: 'ILLEGAL_TRANSITION' });

      // Operators set policy but do not approve.
      const token = (await op('/v1/tokens', { role: 'operator', description: 'ops' })).token as string;
      const asOperator = await env.app.inject({
        method: 'POST',
        url: `/v1/autonomy/decisions/${decisionIdOf('retry', 'n1')}/approve`,
        payload: {},
        headers: { authorization: `Bearer ${token}` },
      });
      expect(asOperator.statusCode).toBe(403);

      await publishPassOn(env.nc, [signalOf('node-failed', 'n1')], allOk);
      await waitForEngine(env.nc);
      const last = await env.store.streamLastSequence();
      const one = (await env.app.inject({ url: `/v1/autonomy/decisions/${decisionIdOf('retry', 'n1')}?minSeq=${last}` })).json();
      expect(one).toMatchObject({ status: 'running', approvals: ['token:bootstrap-admin'], remediation: { commandName: 'metal.retry' } });
      expect(one.history.map((h: { type: string }) => h.type)).toEqual([
        'DecisionOpened',
        'DecisionApprovalRecorded',
        'DecisionApproved',
        'DecisionRemediationStarted',
      ]);
      expect((await env.app.inject({ url: `/v1/autonomy/budgets?minSeq=${last}` })).json().items).toMatchObject([{ scope: 'metal', limit: 3, consumed: 1 }]);
      const policies = (await env.app.inject({ url: `/v1/autonomy/policies?minSeq=${last}` })).json().items;
      expect(policies.find((p: { category: string }) => p.category === 'recreate')).toMatchObject({
        disposition: 'require',
        effectiveDisposition: 'block',
        overridden: true,
        paused: true,
      });
      const passes = (await env.app.inject({ url: '/v1/autonomy/passes?limit=5' })).json().items;
      expect(passes).toHaveLength(2);
      expect(passes[0].sensors).toHaveLength(firstLaneSensors.length);
      expect((await env.app.inject({ url: '/v1/autonomy/controls' })).json()).toMatchObject({
        halted: false,
        pausedOwners: ['vps'],
        overrides: { recreate: 'block' },
      });
      const openapi = (await env.app.inject({ url: '/v1/openapi.json' })).json();
      expect(Object.keys(openapi.paths)).toEqual(
        expect.arrayContaining([
          '/v1/autonomy/decisions',
          '/v1/autonomy/decisions/{decisionId}/approve',
          '/v1/autonomy/decisions/{decisionId}/reject',
          '/v1/autonomy/policies',
          '/v1/autonomy/passes',
        ]),
      );

      const live = dump(env.dataDir);
      expect(live.autonomy_decisions).toHaveLength(4);
      const rebuilt = await env.app.inject({ method: 'POST', url: '/v1/admin/projections/autonomy/rebuild' });
      expect(rebuilt.statusCode).toBe(200);
      expect(dump(env.dataDir)).toEqual(live);
    } finally {
      await engine.stop();
      responder.unsubscribe();
    }
  });

  it('lists policies only once the read model applied the sequence asked for (read-your-writes after a change)', async () => {
    await using env = await startApi({ config: { readYourWritesTimeoutMs: 500 } });
    const set = await env.app.inject({ method: 'POST', url: '/v1/commands/autonomy.setPolicy', payload: { category: 'retry', disposition: 'auto' } });
    const { seq } = set.json<{ seq: number }>();
    const items = (await env.app.inject({ url: `/v1/autonomy/policies?minSeq=${seq}` })).json().items;
    expect(items.find((p: { category: string }) => p.category === 'retry')).toMatchObject({ disposition: 'require', effectiveDisposition: 'auto' });
    const ahead = await env.app.inject({ url: `/v1/autonomy/policies?minSeq=${seq + 1_000}` });
    expect([ahead.statusCode, ahead.json().code]).toEqual([400, 'MIN_SEQ_AHEAD']);
    expect((await env.app.inject({ url: '/v1/autonomy/policies?minSeq=-1' })).statusCode).toBe(400);
  });
});
