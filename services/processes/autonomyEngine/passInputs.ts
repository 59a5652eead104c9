import type { RemediationPlan } from '../../../schemas/autonomy/plan.ts';
import type { PolicyDeclaration } from '../../../schemas/autonomy/policies.ts';
import type { PassMarker, Signal } from '../../../schemas/autonomy/signals.ts';
import type { Binding } from '../../autonomy/bindings.ts';
import type { ControlsState } from '../../autonomy/controls/controls.ts';
import type { DecisionState } from '../../autonomy/decision/decision.ts';
import type { PolicyCatalog } from '../../autonomy/policies.ts';
import type { Sensor } from '../../autonomy/sensors/sensor.ts';
import type { RemediationCommand } from './remediations.ts';

/** What the autonomy engine's decisions take: its settings, the tasks that read for it and what they read. */

export interface AutonomyEngineSettings {
  readonly policies: PolicyCatalog;
  readonly bindings: readonly Binding[];
  readonly sensors: readonly Sensor[];
  /** After a remediation started, how long before its outcome is judged. */
  readonly settleMs: number;
  /** Remediations per owner in any span of `budgetWindowMs`. */
  readonly budget: number;
  readonly budgetWindowMs: number;
}

/** `autonomy.openDecision`'s payload: a bound signal of the pass, with the plan its binding makes of it. */
export interface Opening {
  readonly category: string;
  readonly key: string;
  readonly passId: string;
  readonly signal: Signal;
  readonly policy: PolicyDeclaration;
  readonly plan: RemediationPlan;
}

/** What one pass says of one decision. */
export interface PassContext {
  readonly passId: string;
  /** The pass carries a bound signal for the decision (its signal is present): it opens or updates it. */
  readonly opening?: Opening;
  /** What each sensor reported in this pass: an absent signal means something only if its sensors ran fine. */
  readonly sensors: PassMarker['sensors'];
}

/** What the engine reads outside its decisions: a pass's signals and the decisions the log holds, then each decision. */
export type EngineTask =
  | { readonly type: 'readPass'; readonly marker: PassMarker }
  | { readonly type: 'readDecision'; readonly stage: 'before' | 'after'; readonly decisionId: string; readonly pass: PassContext };

/** When an approved decision may start: the controls, the commands its plan runs, and a failed budget path. */
export interface StartView {
  readonly controls: ControlsState;
  /** Undefined when nothing this control plane runs carries the plan out (`none`, a target gone). */
  readonly remediation: readonly RemediationCommand[] | undefined;
  /** Why the budget path failed before budget was taken (the decision then asks for approval: fail closed). */
  readonly budgetFault?: string;
}

/** What a task read, decided on within the pass's reaction. `now`: when it was read (ms since the epoch). */
export type EngineObservation =
  | { readonly type: 'pass'; readonly marker: PassMarker; readonly signals: readonly Signal[]; readonly decisionIds: readonly string[] }
  | { readonly type: 'before'; readonly decisionId: string; readonly pass: PassContext; readonly state: DecisionState; readonly now: number }
  | {
      readonly type: 'after';
      readonly decisionId: string;
      readonly pass: PassContext;
      readonly state: DecisionState;
      readonly now: number;
      /** Read only for an approved decision. */
      readonly start?: StartView;
    };
