import { budgetIdOf } from '../../../schemas/autonomy/ids.ts';
import { ConsumeBudget } from '../../../schemas/autonomy/budgetCommands.ts';
import type { BudgetEvent } from '../../../schemas/autonomy/controlEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { budgetAggregate } from '../controls/controls.ts';

/**
 * `autonomy.consumeBudget`: one remediation of a scope, admitted while fewer than `limit` were admitted in the
 * `windowMs` up to now. A sliding window, so no span of that length ever holds more than `limit` (fixed windows let
 * twice the budget run across a boundary). The uses live on the scope's own aggregate, so optimistic concurrency
 * serialises every replica's consumption: the limit can never be overshot. An episode takes budget once (a repeat
 * is a no-op).
 */
export const consumeBudget = defineCommand({
  name: 'autonomy.consumeBudget',
  exposure: ['engine'],
  schema: ConsumeBudget,
  aggregate: budgetAggregate,
  aggregateId: (command) => budgetIdOf(command.scope),
  decide(command, state, { now }): BudgetEvent[] {
    const { scope, windowMs, limit, decisionId, episode } = command;
    if (state.uses.some((u) => u.entry === `${decisionId}#${episode}`)) return [];
    const nowMs = Date.parse(now);
    const inWindow = state.uses.filter((u) => u.atMs > nowMs - windowMs);
    if (inWindow.length >= limit) {
      // The next use is admitted once enough of these left the window (never with a limit of 0).
      const freesAt = limit === 0 ? 'never' : new Date(inWindow[inWindow.length - limit]!.atMs + windowMs).toISOString();
      throw new DomainError(
        'BUDGET_EXHAUSTED',
        `budget of ${scope} is used up: ${inWindow.length} of ${limit} in the last ${windowMs} ms (next free at ${freesAt})`,
      );
    }
    return [{ type: 'BudgetTaken', data: { budgetId: budgetIdOf(scope), scope, at: now, windowMs, limit, decisionId, episode } }];
  },
});
