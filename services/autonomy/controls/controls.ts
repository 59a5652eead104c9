import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { budgetEvents, controlEvents, type BudgetEvent, type ControlEvent } from '../../../schemas/autonomy/controlEvents.ts';
import { BUDGET_REMEMBERED_MS } from '../../../schemas/autonomy/budgetCommands.ts';
import type { Disposition } from '../../../schemas/autonomy/policies.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export interface ControlsState {
  readonly overrides: Readonly<Record<string, Disposition>>;
  readonly paused: readonly string[];
  readonly halted: boolean;
}

/** Operator controls of autonomy (`bc.evt.autonomy.controls.fleet`): disposition overrides, paused owners, halt. */
export const controlsAggregate = defineAggregate<ControlsState, ControlEvent>({
  module: 'autonomy',
  type: 'controls',
  initialState: { overrides: {}, paused: [], halted: false },
  catalog: new EventCatalog(controlEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'PolicyDispositionSet': {
        const { [event.data.category]: _old, ...rest } = state.overrides;
        return { ...state, overrides: event.data.disposition ? { ...rest, [event.data.category]: event.data.disposition } : rest };
      }
      case 'OwnerPauseSet': {
        const others = state.paused.filter((o) => o !== event.data.owner);
        return { ...state, paused: event.data.paused ? [...others, event.data.owner].sort() : others };
      }
      case 'AutonomyHaltSet':
        return { ...state, halted: event.data.halted };
    }
  },
});

export interface BudgetUse {
  /** `<decisionId>#<episode>`: an episode takes budget once. */
  readonly entry: string;
  readonly atMs: number;
}

export interface BudgetState {
  /** The scope's uses of the last `BUDGET_REMEMBERED_MS` (before the latest), oldest first. */
  readonly uses: readonly BudgetUse[];
}

/** One consent budget per scope (`bc.evt.autonomy.budget.<budgetIdOf(scope)>`): its uses, for a sliding window. */
export const budgetAggregate = defineAggregate<BudgetState, BudgetEvent>({
  module: 'autonomy',
  type: 'budget',
  initialState: { uses: [] },
  catalog: new EventCatalog(budgetEvents),
  evolve(state, event) {
    if (event.type !== 'BudgetTaken') return state;
    const use = { entry: `${event.data.decisionId}#${event.data.episode}`, atMs: Date.parse(event.data.at) };
    const uses = [...state.uses, use].sort((a, b) => a.atMs - b.atMs);
    const horizon = uses.at(-1)!.atMs - BUDGET_REMEMBERED_MS;
    return { uses: uses.filter((u) => u.atMs > horizon) };
  },
});
