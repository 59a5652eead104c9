import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../schemas/autonomy/controlEvents.ts';
import { budgetIdOf, decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { consumeBudget } from '../../services/autonomy/budget/consume.ts';
import { haltAutonomy, pauseOwner, setPolicy } from '../../services/autonomy/controls/commands.ts';
import { budgetAggregate, controlsAggregate } from '../../services/autonomy/controls/controls.ts';
import { declaredPolicies } from '../../services/autonomy/policies.ts';
import { deciderSpec } from '../metal/spec.ts';
import { takeBudgetAt } from './budgetRun.ts';

const budget = deciderSpec(budgetAggregate);
const controls = deciderSpec(controlsAggregate);
/** The built-in declarations, with no plugin registered (what the command's dependencies read from the registry). */
const builtIn = { dependencies: declaredPolicies({ plugins: new Map() }) };
const HOUR = 3_600_000;
const take = (key: string, episode = 1) => ({ scope: 'metal', windowMs: HOUR, limit: 2, decisionId: decisionIdOf('maintenance', key), episode });
/** A use at `at` (the spec decides at 2026-12-02T12:00:00Z). */
const taken = (key: string, at = '2026-12-02T12:00:00.000Z', episode = 1): BudgetEvent => ({
  type: 'BudgetTaken',
  data: { budgetId: budgetIdOf('metal'), at, ...take(key, episode) },
});

describe('autonomy.consumeBudget', () => {
  it('admits up to the limit, once per episode, and refuses the next', () => {
    budget([])
      .when(consumeBudget, take('n1'))
      .then([taken('n1')]);
    budget([taken('n1')])
      .when(consumeBudget, take('n1'))
      .then([]);
    budget([taken('n1'), taken('n2')])
      .when(consumeBudget, take('n3'))
      .thenRejects('BUDGET_EXHAUSTED');
    budget([taken('n1'), taken('n2')])
      .when(consumeBudget, take('n1', 2))
      .thenRejects('BUDGET_EXHAUSTED');
  });

  it('counts a sliding window: uses just before a fixed boundary still count just after it (issue 31, item 12)', () => {
    // Two at 11:59 (the end of one clock hour): at 12:00 and until 12:59 nothing more runs, at 12:59:01 one does.
    const late = [taken('n1', '2026-12-02T11:59:00.000Z'), taken('n2', '2026-12-02T11:59:00.000Z')];
    budget(late).when(consumeBudget, take('n3')).thenRejects('BUDGET_EXHAUSTED');
    const state = late.reduce(budgetAggregate.evolve, budgetAggregate.initialState);
    expect(takeBudgetAt(state, take('n3'), Date.parse('2026-12-02T12:58:59.999Z'))).toBe('refused');
    expect(takeBudgetAt(state, take('n3'), Date.parse('2026-12-02T12:59:00.001Z'))).toMatchObject({ type: 'BudgetTaken' });
  });

  it('forgets uses older than any window may be, and legacy fixed-window consumptions', () => {
    const legacy = {
      type: 'BudgetConsumed',
      data: { budgetId: 'bud-x', scope: 'metal', windowStart: '2026-12-02T11:00:00.000Z', limit: 2, decisionId: 'd', episode: 1 },
    };
    const old = taken('n1', '2026-11-20T12:00:00.000Z');
    const state = [legacy as BudgetEvent, old, taken('n2')].reduce(budgetAggregate.evolve, budgetAggregate.initialState);
    expect(state.uses.map((u) => u.entry)).toEqual([`${decisionIdOf('maintenance', 'n2')}#1`]);
  });
});

describe('controls', () => {
  it('sets and clears overrides of declared categories only', () => {
    controls([])
      .when(setPolicy, { category: 'retry', disposition: 'auto' }, builtIn)
      .then([{ type: 'PolicyDispositionSet', data: { category: 'retry', disposition: 'auto' } }]);
    controls([]).when(setPolicy, { category: 'reimage', disposition: 'auto' }, builtIn).thenRejects('NOT_PERMITTED');
    controls([]).when(setPolicy, { category: 'retry', disposition: null }, builtIn).then([]);
  });

  it('pauses known owners and halts, idempotently', () => {
    controls([])
      .when(pauseOwner, { owner: 'metal', paused: true }, builtIn)
      .then([{ type: 'OwnerPauseSet', data: { owner: 'metal', paused: true, reason: null } }]);
    controls([{ type: 'OwnerPauseSet', data: { owner: 'metal', paused: true, reason: null } }])
      .when(pauseOwner, { owner: 'metal', paused: true }, builtIn)
      .then([]);
    controls([]).when(pauseOwner, { owner: 'nobody', paused: true }, builtIn).thenRejects('NOT_PERMITTED');
    const halted = controls([])
      .when(haltAutonomy, { halted: true, reason: 'incident' })
      .then([{ type: 'AutonomyHaltSet', data: { halted: true, reason: 'incident' } }]);
    expect(controlsAggregate.evolve(controlsAggregate.initialState, halted[0]!)).toMatchObject({ halted: true });
  });
});
