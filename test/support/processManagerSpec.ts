import { expect } from 'vitest';
import type { Effect, Fold, Input, Reaction } from '../../services/platform/processManager/processManager.ts';

/** A reaction as data a test can compare: commands without their `ifRefused` function (`refusable` says there is one). */
export function plainReactions<T>(reactions: readonly Reaction<T>[]) {
  const plain = (e: Effect<T>) =>
    e.kind === 'command' ? { command: e.name, payload: e.payload, commandId: e.commandId, ...(e.ifRefused ? { refusable: true } : {}) } : e;
  return reactions.map((r) => ({ key: r.key, effects: r.effects.map(plain), ...(r.coalesce ? { coalesce: true } : {}) }));
}

/**
 * Given/when/then for a process manager, as `deciderSpec` is for a decider: fold `given` with `evolve`, then (as the
 * host does) fold the `when` event, `decide`, fold the decided commands, and compare the reactions.
 */
export function processManagerSpec<E, M, T = never>(pm: {
  model: () => M;
  evolve(model: M, input: Fold<E, T>): void;
  decide(input: Input<E>, model: M): readonly Reaction<T>[];
}) {
  return (given: readonly E[]) => {
    const model = pm.model();
    // Each event as if carried by a message of its own, in log order.
    let seq = 0;
    for (const event of given) pm.evolve(model, { type: 'event', event, seq: ++seq });
    return {
      model,
      when(input: Input<E>) {
        if (input.type === 'event') pm.evolve(model, { type: 'event', event: input.event, seq: ++seq });
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
