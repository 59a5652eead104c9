import { budgetIdOf } from '../../../schemas/autonomy/ids.ts';
import { ConsumeBudget } from '../../../schemas/autonomy/budgetCommands.ts';
import type { BudgetEvent } from '../../../schemas/autonomy/controlEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { budgetAggregate } from '../controls/controls.ts';

/**
 * `autonomy.consumeBudget`: one remediation of a scope in a window. The count lives on the budget's own aggregate, so
 * optimistic concurrency serialises every replica's consumption: the limit can never be overshot. An episode takes
 * budget once (a repeat is a no-op).
 */
export const consumeBudget = defineCommand({
  name: 'autonomy.consumeBudget',
  exposure: ['engine'],
  schema: ConsumeBudget,
  aggregate: budgetAggregate,
  aggregateId: (command) => budgetIdOf(command.scope, command.windowStart),
  decide(command, state): BudgetEvent[] {
    const entry = `${command.decisionId}#${command.episode}`;
    if (state.consumed.includes(entry)) return [];
    if (state.consumed.length >= command.limit) {
      throw new DomainError('BUDGET_EXHAUSTED', `budget of ${command.scope} in the window from ${command.windowStart} is used up (${command.limit})`);
    }
    const { scope, windowStart, limit, decisionId, episode } = command;
    return [{ type: 'BudgetConsumed', data: { budgetId: budgetIdOf(scope, windowStart), scope, windowStart, limit, decisionId, episode } }];
  },
});
