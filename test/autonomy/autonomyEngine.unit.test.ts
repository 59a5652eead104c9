import { describe, expect, it } from 'vitest';
import { autonomyCommandId, decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { PassMarker } from '../../schemas/autonomy/signals.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import type { ExistingDecision } from '../../services/autonomy/decision/decision.ts';
import { builtinPolicies, PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import type { EngineCommand, Reaction } from '../../services/platform/processManager/processManager.ts';
import { autonomyEngineModel, decideAutonomyEngine, evolveAutonomyEngine } from '../../services/processes/autonomyEngine/passDecisions.ts';
import type { EngineObservation, EngineTask, PassContext, StartView } from '../../services/processes/autonomyEngine/passInputs.ts';
import { plainReactions, processManagerSpec } from '../support/processManagerSpec.ts';
import { allOk, signalOf } from './autonomyFixture.ts';
import { noControls, openRetry, policyOf, retryPlan } from './fixtures.ts';

const NOW = Date.parse('2026-12-02T12:00:00.000Z');
const settings = {
  policies: new PolicyCatalog(builtinPolicies),
  bindings: firstLaneBindings,
  sensors: firstLaneSensors,
  settleMs: 90_000,
  budget: 20,
  budgetWindowMs: 3_600_000,
};
const given = processManagerSpec<PassMarker, ReturnType<typeof autonomyEngineModel>, EngineTask, EngineObservation>({
  model: () => autonomyEngineModel(settings),
  evolve: evolveAutonomyEngine,
  decide: decideAutonomyEngine,
});
const observed = (observation: EngineObservation) => ({ type: 'observed', observation }) as const;
const marker: PassMarker = { passId: 'p2', at: '2026-12-02T12:00:00.000Z', sensors: allOk, signalCount: 1 };
const id = decisionIdOf('retry', 'n1');
const key = `decision:${id}`;
const opening = { ...openRetry('n1', 'p2'), signal: signalOf('node-failed', 'n1', { facts: { operation: 'deploy' } }) };
const withSignal: PassContext = { passId: 'p2', opening, sensors: allOk };
const without: PassContext = { passId: 'p2', sensors: allOk };

const decision = (over: Partial<ExistingDecision> = {}): ExistingDecision => ({
  exists: true,
  decisionId: id,
  category: 'retry',
  key: 'n1',
  policy: policyOf('retry'),
  episode: 1,
  status: 'pending',
  disposition: 'require',
  approvedBy: null,
  signal: opening.signal,
  plan: retryPlan('n1'),
  planDigest: 'digest-1',
  expiresAt: '2026-12-02T16:00:00.000Z',
  approvals: [],
  cooldownUntil: null,
  settleUntil: null,
  ineffectiveStreak: 0,
  escalated: false,
  closedReason: null,
  ...over,
});
const retry = [{ name: 'metal.retry', payload: { nodeId: 'n1', approvedPlanDigest: 'digest-1' } }];
const start = (over: Partial<StartView> = {}): StartView => ({ controls: noControls, remediation: retry, ...over });
const after = (state: ExistingDecision, pass = without, startView?: StartView) =>
  observed({ type: 'after', decisionId: id, pass, state, now: NOW, ...(startView ? { start: startView } : {}) });
const cmd = (command: string, payload: unknown, commandId: string, more: object = {}) => ({ command, payload, commandId, settles: 'refusal', ...more });
const commandsOf = (reactions: readonly Reaction<EngineTask, EngineObservation>[]) =>
  reactions.flatMap((r) => r.effects).filter((e): e is EngineCommand<EngineTask, EngineObservation> => e.kind === 'command');

describe('autonomy engine: what a pass decides', () => {
  it('given a pass marker, when it arrives, then the pass is read on the one pass key', () => {
    given([])
      .when({ type: 'event', event: marker })
      .then([{ key: 'pass', effects: [{ kind: 'task', task: { type: 'readPass', marker } }] }]);
  });

  it('given a pass read, then each decision the log holds or a bound signal opens is read on its own key; an unbound signal opens none', () => {
    const held = decisionIdOf('maintenance', 'n9');
    const unbound = { ...signalOf('node-failed', 'n2'), kind: 'no-such-signal' };
    given([])
      .when(observed({ type: 'pass', marker, signals: [opening.signal, unbound], decisionIds: [held] }))
      .then([
        { key: `decision:${held}`, effects: [{ kind: 'task', task: { type: 'readDecision', stage: 'before', decisionId: held, pass: without } }] },
        {
          key,
          effects: [
            {
              kind: 'task',
              task: { type: 'readDecision', stage: 'before', decisionId: id, pass: { ...withSignal, opening: { ...opening, plan: retryPlan('n1') } } },
            },
          ],
        },
      ]);
  });

  it('given an expired pending request and its signal again, then it expires first, opens, and is read again', () => {
    const state = decision({ expiresAt: '2026-12-02T11:00:00.000Z' });
    given([])
      .when(observed({ type: 'before', decisionId: id, pass: withSignal, state, now: NOW }))
      .then([
        {
          key,
          effects: [
            cmd('autonomy.expire', { decisionId: id, episode: 1 }, autonomyCommandId('expire', id, 1)),
            cmd('autonomy.openDecision', opening, autonomyCommandId('open', id, 'p2'), { answerable: true }),
            { kind: 'task', task: { type: 'readDecision', stage: 'after', decisionId: id, pass: withSignal } },
          ],
        },
      ]);
  });

  it('an opening that asks for approval tells the owner once: not on a repeat, not for auto', () => {
    const { reactions } = given([]).when(observed({ type: 'before', decisionId: id, pass: withSignal, state: { exists: false }, now: NOW }));
    const open = commandsOf(reactions).find((c) => c.name === 'autonomy.openDecision')!;
    const events = (disposition: string) => [{ type: 'DecisionOpened', data: { disposition } }];
    expect(open.ifAccepted!({ appended: true, events: events('require') })).toEqual([
      {
        kind: 'announce',
        subject: 'bc.notify.metal',
        data: { kind: 'approval-requested', owner: 'metal', decisionId: id, signal: { kind: 'node-failed', key: 'n1', detail: opening.signal.detail } },
      },
    ]);
    expect(open.ifAccepted!({ appended: false, events: events('require') })).toBeUndefined();
    expect(open.ifAccepted!({ appended: true, events: events('auto') })).toBeUndefined();
  });

  it('given a decision policy approved, then budget, its remediation and the record that it started, in that order', () => {
    const remediate = autonomyCommandId('remediate', id, 1);
    given([])
      .when(after(decision({ status: 'approved', approvedBy: 'policy', disposition: 'auto' }), without, start()))
      .then([
        {
          key,
          effects: [
            cmd('autonomy.consumeBudget', { scope: 'metal', windowMs: 3_600_000, limit: 20, decisionId: id, episode: 1 }, autonomyCommandId('budget', id, 1), {
              refusable: true,
            }),
            cmd('metal.retry', retry[0]!.payload, remediate, { refusable: true }),
            cmd(
              'autonomy.recordStarted',
              { decisionId: id, episode: 1, commandName: 'metal.retry', commandId: remediate, settleMs: 90_000 },
              autonomyCommandId('started', id, 1),
            ),
          ],
        },
      ]);
  });

  it('fails closed: a refused budget, or a fault on its path, asks for approval instead', () => {
    const approved = decision({ status: 'approved', approvedBy: 'policy', disposition: 'auto' });
    const { reactions } = given([]).when(after(approved, without, start()));
    const budget = commandsOf(reactions)[0]!;
    const instead = budget.ifRefused!({ code: 'BUDGET_EXHAUSTED', message: 'used up' })!;
    expect(plainReactions([{ key, effects: instead }])[0]!.effects).toEqual([
      cmd('autonomy.requireApproval', { decisionId: id, episode: 1, reason: 'BUDGET_EXHAUSTED: used up' }, autonomyCommandId('require', id, 1), {
        answerable: true,
      }),
    ]);
    given([])
      .when(after(approved, without, start({ budgetFault: 'injected' })))
      .then([
        {
          key,
          effects: [
            cmd('autonomy.requireApproval', { decisionId: id, episode: 1, reason: 'budget path failed: injected' }, autonomyCommandId('require', id, 1), {
              answerable: true,
            }),
          ],
        },
      ]);
  });

  it('approvers approved: no budget; halted or paused owner, or nothing to run: nothing starts', () => {
    const approved = decision({ status: 'approved', approvedBy: 'approvers' });
    expect(commandsOf(given([]).when(after(approved, without, start())).reactions).map((c) => c.name)).toEqual(['metal.retry', 'autonomy.recordStarted']);
    given([])
      .when(after(approved, without, start({ controls: { ...noControls, halted: true } })))
      .then([]);
    given([])
      .when(after(approved, without, start({ controls: { ...noControls, paused: ['metal'] } })))
      .then([]);
    given([])
      .when(after(approved, without, start({ remediation: undefined })))
      .then([]);
  });

  it('a later step refused for quota waits for the next pass; any other refusal is recorded as started', () => {
    const two = [
      { name: 'vps.deleteInstance', payload: { tenantId: 't1', instanceId: 'i1' } },
      { name: 'vps.createInstance', payload: { tenantId: 't1', instanceId: 'i1-r0' } },
    ];
    const { reactions } = given([]).when(after(decision({ status: 'approved', approvedBy: 'approvers' }), without, start({ remediation: two })));
    const [del, create] = commandsOf(reactions);
    expect(create!.ifRefused!({ code: 'QUOTA_EXCEEDED', message: 'full' })).toEqual([]);
    expect(del!.ifRefused!({ code: 'QUOTA_EXCEEDED', message: 'full' })!.map((e) => (e.kind === 'command' ? e.name : e.kind))).toEqual([
      'autonomy.recordStarted',
    ]);
  });

  it('judges a settled remediation once its signal is gone and its sensors ran; never while it settles or sensors failed', () => {
    const outcome = (present: boolean, sensorOk = true) => ({ decisionId: id, episode: 1, passId: 'p2', signalPresent: present, sensorOk });
    const running = decision({ status: 'running', settleUntil: '2026-12-02T11:59:00.000Z' });
    given([])
      .when(after(running))
      .then([{ key, effects: [cmd('autonomy.recordOutcome', outcome(false), autonomyCommandId('outcome', id, 1, 'p2'), { answerable: true })] }]);
    given([])
      .when(after(decision({ status: 'running', settleUntil: '2026-12-02T12:01:00.000Z' })))
      .then([]);
    const crashed = { ...without, sensors: allOk.map((r) => (r.sensor === 'node-state' ? { sensor: r.sensor, ok: false as const, error: 'crashed' } : r)) };
    given([])
      .when(after(decision({ status: 'notified' }), crashed))
      .then([]);
    given([])
      .when(after(decision({ status: 'notified' }), withSignal))
      .then([]);
  });

  it('a holding action lasts while its signal does, and is cleared before its outcome once it is gone', () => {
    const holding = decision({
      status: 'running',
      category: 'maintenance',
      plan: { action: 'metal.bmcMaintenance', target: { type: 'node', id: 'n1' }, params: {} },
    });
    given([]).when(after(holding, withSignal)).then([]);
    const cleared = commandsOf(given([]).when(after(holding)).reactions);
    expect(cleared.map((c) => [c.name, c.payload])).toEqual([
      ['metal.reportBmcHealth', { nodeId: 'n1', reachable: true }],
      ['autonomy.recordOutcome', { decisionId: id, episode: 1, passId: 'p2', signalPresent: false, sensorOk: true }],
    ]);
    expect(cleared[1]!.ifAccepted!({ appended: true, events: [{ type: 'DecisionOutcomeRecorded', data: { escalated: true } }] })).toMatchObject([
      { kind: 'announce', subject: 'bc.notify.metal', data: { kind: 'escalated', decisionId: id } },
    ]);
  });
});
