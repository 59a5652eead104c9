import { rolloutVerbFrom } from '../../../../../schemas/fleet/rolloutVerbs.ts';
import type { Role, RolloutStatus, RolloutVerb } from '../api/shapes.ts';

/** An operator's verb on a rollout as the console offers it: its button, what confirming does, and whether it is risky. */
export interface RolloutAction {
  readonly verb: RolloutVerb;
  readonly label: string;
  readonly consequence: string;
  readonly danger: boolean;
}

const rolloutActions: readonly RolloutAction[] = [
  { verb: 'pause', label: 'Pause', danger: false, consequence: 'No further wave starts; what the hosts of the wave in flight report still counts.' },
  { verb: 'resume', label: 'Resume', danger: false, consequence: 'Waves start again, each once every host of the one before is healthy.' },
  {
    verb: 'continue',
    label: 'Continue',
    danger: false,
    consequence: 'The failed hosts are accepted as they are, the failure breaker counts afresh and the next wave may start.',
  },
  {
    verb: 'rollback',
    label: 'Roll back',
    danger: true,
    consequence: 'Every host that reported the new version goes back to the version the rollout moved from.',
  },
  { verb: 'abort', label: 'Abort', danger: true, consequence: 'The rollout stops where it is (a rollback too); hosts keep what they run.' },
];

/** Who may send a rollout's verbs: the API lets admin and operator tokens alone (`services/api/accessPolicy.ts`). */
export const operatesRollouts = (role: Role): boolean => role === 'admin' || role === 'operator';

/** The verbs offered on a rollout in `status` to `role`: those the deciders act on from that status. */
export const rolloutActionsFor = (role: Role, status: RolloutStatus): RolloutAction[] =>
  operatesRollouts(role) ? rolloutActions.filter((a) => rolloutVerbFrom[a.verb].includes(status)) : [];
