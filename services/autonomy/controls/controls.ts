import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { budgetEvents, controlEvents, type BudgetEvent, type ControlEvent } from '../../../schemas/autonomy/controlEvents.ts';
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

export interface BudgetState {
  /** `<decisionId>#<episode>` of every episode that took budget in this scope and window. */
  readonly consumed: readonly string[];
}

/** One consent budget per scope and window (`bc.evt.autonomy.budget.<budgetIdOf(scope, windowStart)>`). */
export const budgetAggregate = defineAggregate<BudgetState, BudgetEvent>({
  module: 'autonomy',
  type: 'budget',
  initialState: { consumed: [] },
  catalog: new EventCatalog(budgetEvents),
  evolve: (state, event) => ({ consumed: [...state.consumed, `${event.data.decisionId}#${event.data.episode}`] }),
});
