import { expect } from 'vitest';
import type { Effect, Fold, Input, Reaction } from '../../services/platform/processManager/processManager.ts';

/**
 * A reaction as data a test can compare: commands without their `ifRefused`/`ifAccepted` functions (`refusable`,
 * `answerable` say there is one; `settles` is shown when a command declares it).
 */
export function plainReactions<T, O = never>(reactions: readonly Reaction<T, O>[]) {
  const plain = (e: Effect<T, O>) =>
    e.kind === 'command'
      ? {
          command: e.name,
          payload: e.payload,
          commandId: e.commandId,
          ...(e.ifRefused ? { refusable: true } : {}),
          ...(e.ifAccepted ? { answerable: true } : {}),
          ...(e.settles ? { settles: e.settles } : {}),
        }
      : e;
  return reactions.map((r) => ({ key: r.key, effects: r.effects.map(plain), ...(r.coalesce ? { coalesce: true } : {}) }));
}

/**
 * Given/when/then for a process manager, as `deciderSpec` is for a decider: fold `given` with `evolve`, then (as the
 * host does) fold the `when` event or observation, `decide`, fold the decided commands, and compare the reactions.
 */
export function processManagerSpec<E, M, T = never, O = never>(pm: {
  model: () => M;
  evolve(model: M, input: Fold<E, T, O>): void;
  decide(input: Input<E, O>, model: M): readonly Reaction<T, O>[];
}) {
  return (given: readonly E[]) => {
    const model = pm.model();
    // Each event as if carried by a message of its own, in log order.
    let seq = 0;
    for (const event of given) pm.evolve(model, { type: 'event', event, seq: ++seq });
    return {
      model,
      when(input: Input<E, O>) {
        if (input.type === 'event') pm.evolve(model, { type: 'event', event: input.event, seq: ++seq });
        else if (input.type === 'observed') pm.evolve(model, input);
        const reactions = pm.decide(input, model);
        for (const r of reactions) for (const e of r.effects) if (e.kind === 'command') pm.evolve(model, { type: 'decided', command: e });
        return {
          reactions,
          then(expected: readonly unknown[]) {
            expect(plainReactions(reactions)).toEqual(expected);
            return reactions;
          },
        };
      },
    };
  };
}
