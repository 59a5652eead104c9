import { expect } from 'vitest';
import type { AggregateDefinition, CommandDefinition, DomainEventLike } from '../../services/platform/commands/commandDefinition.ts';

/**
 * Given/when/then for one decider: fold `given` with the aggregate's evolve, run the command's schema and `decide`,
 * and compare the events (or the refusal's code).
 */
export function deciderSpec<S, E extends DomainEventLike>(aggregate: AggregateDefinition<S, E>) {
  return (given: readonly E[]) => {
    const state = given.reduce((s, e) => aggregate.evolve(s, e), aggregate.initialState);
    return {
      state,
      when(command: CommandDefinition<string, any, S, E, any>, payload: unknown, options: { commandId?: string; dependencies?: unknown } = {}) {
        const run = () =>
          command.decide(command.schema.parse(payload), state, {
            commandId: options.commandId ?? 'cmd-00000001',
            actor: 'test',
            now: '2026-12-02T12:00:00.000Z',
            dependencies: options.dependencies,
          });
        return {
          then: (events: readonly E[] | ((events: readonly E[]) => void)) => {
            const decided = run();
            if (typeof events === 'function') events(decided);
            else expect(decided).toEqual(events);
            return decided;
          },
          thenRejects: (code: string) => {
            expect(run).toThrowError(expect.objectContaining({ code }) as never);
          },
        };
      },
    };
  };
}
