import { expect } from 'vitest';
import type { HostModuleObservation } from '../../schemas/agent/hostModuleObservation.ts';
import { RolloutControllerModel, type ControllerInput } from '../../services/processes/rolloutController/controllerModel.ts';
import { decideRolloutReactions } from '../../services/processes/rolloutController/rolloutReactions.ts';
import { plainReactions } from '../support/processManagerSpec.ts';

/** Given/when/then for the rollout controller: fold `given`, fold the `when` input, compare what it decides. */
export function givenInputs(given: readonly ControllerInput[]) {
  const model = new RolloutControllerModel();
  for (const input of given) model.apply(input);
  return {
    model,
    when(input: ControllerInput) {
      model.apply(input);
      const reactions = decideRolloutReactions(input, model);
      return { reactions, then: (expected: readonly unknown[]) => expect(plainReactions(reactions)).toEqual(expected) };
    },
    /** An input delivered again: decided on the model as it is, not folded twice (as the process manager host does). */
    redelivered(input: ControllerInput) {
      const reactions = decideRolloutReactions(input, model);
      return { reactions, then: (expected: readonly unknown[]) => expect(plainReactions(reactions)).toEqual(expected) };
    },
  };
}

/** What a heartbeat says of nginx on `host` at `at` (ms): `version` active with every probe passing, unless told. */
export function observed(host: string, version: string, at: number, over: Partial<HostModuleObservation> = {}): ControllerInput {
  const observation: HostModuleObservation = {
    host,
    module: 'nginx',
    version,
    digest: 'a'.repeat(64),
    state: 'active',
    probes: [{ name: 'http', ok: true }],
    at,
    ...over,
  };
  return { type: 'observed', observation };
}
