import type { ConsumeBudget } from '../../schemas/autonomy/budgetCommands.ts';
import type { BudgetEvent } from '../../schemas/autonomy/controlEvents.ts';
import { consumeBudget } from '../../services/autonomy/budget/consume.ts';
import type { BudgetState } from '../../services/autonomy/controls/controls.ts';

/** `autonomy.consumeBudget` decided at `nowMs`: the use it appends, nothing for a repeat, or `refused` (BUDGET_EXHAUSTED). */
export function takeBudgetAt(state: BudgetState, command: ConsumeBudget, nowMs: number): BudgetEvent | 'refused' | 'repeat' {
  try {
    const [event] = consumeBudget.decide(consumeBudget.schema.parse(command), state, {
      commandId: 'cmd-budget',
      actor: 'engine',
      now: new Date(nowMs).toISOString(),
      dependencies: undefined,
    });
    return event ?? 'repeat';
  } catch (err) {
    if ((err as { code?: string }).code === 'BUDGET_EXHAUSTED') return 'refused';
    throw err;
  }
}
