import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../schemas/autonomy/controlEvents.ts';
import { budgetIdOf, decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { consumeBudget } from '../../services/autonomy/budget/consume.ts';
import { haltAutonomy, pauseOwner, setPolicy } from '../../services/autonomy/controls/commands.ts';
import { budgetAggregate, controlsAggregate } from '../../services/autonomy/controls/controls.ts';
import { declaredPolicies } from '../../services/autonomy/policies.ts';
import { deciderSpec } from '../metal/spec.ts';

const budget = deciderSpec(budgetAggregate);
const controls = deciderSpec(controlsAggregate);
/** The built-in declarations, with no plugin registered (what the command's dependencies read from the registry). */
const builtIn = { dependencies: declaredPolicies({ plugins: new Map() }) };
const windowStart = '2026-12-02T12:00:00.000Z';
const take = (key: string, episode = 1) => ({ scope: 'metal', windowStart, limit: 2, decisionId: decisionIdOf('maintenance', key), episode });
const consumed = (key: string, episode = 1): BudgetEvent => ({
  type: 'BudgetConsumed',
  data: { budgetId: budgetIdOf('metal', windowStart), ...take(key, episode) },
});

describe('autonomy.consumeBudget', () => {
  it('admits up to the limit, once per episode, and refuses the next', () => {
    budget([])
      .when(consumeBudget, take('n1'))
      .then([consumed('n1')]);
    budget([consumed('n1')])
      .when(consumeBudget, take('n1'))
      .then([]);
    budget([consumed('n1'), consumed('n2')])
      .when(consumeBudget, take('n3'))
      .thenRejects('BUDGET_EXHAUSTED');
    budget([consumed('n1'), consumed('n2')])
      .when(consumeBudget, take('n1', 2))
      .thenRejects('BUDGET_EXHAUSTED');
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
