import { describe, expect, it } from 'vitest';
import type { AggregateRepository, AggregateSnapshot } from '../../services/platform/commands/aggregateRepository.ts';
import type { AggregateLoader, CommandContext } from '../../services/platform/commands/commandDefinition.ts';
import { DependencyFreshness } from '../../services/platform/commands/dependencyFreshness.ts';
import { RememberedCommands } from '../../services/platform/commands/rememberedCommands.ts';
import { DomainError, PlatformError } from '../../schemas/platformError.ts';
import type { ReadFrom } from '../../services/platform/eventStore/eventStore.ts';
import { siteAggregate } from '../../services/site/site/site.ts';

type SiteState = typeof siteAggregate.initialState;
const snapshot = (exists: boolean, seq = 1): AggregateSnapshot<SiteState> => ({
  state: exists ? ({ exists: true } as SiteState) : siteAggregate.initialState,
  seq,
  length: seq,
  commands: RememberedCommands.none,
});

/**
 * The dependency site as three places know it: the log (what `load` reads, at either replica), this process's cache
 * (`cachedOrInitial`) and what it saw last (`latestSeen`). Every read is recorded.
 */
class Places {
  log = snapshot(false);
  cache = snapshot(false, 0);
  seen = snapshot(false);
  readonly reads: string[] = [];

  asRepository(): Pick<AggregateRepository, 'load' | 'cachedOrInitial' | 'latestSeen'> {
    return {
      load: async (_agg: unknown, _id: string, from: ReadFrom = 'replica') => (this.reads.push(`load@${from}`), this.log),
      cachedOrInitial: () => (this.reads.push('cache'), this.cache),
      latestSeen: async () => (this.reads.push('latestSeen'), this.seen),
    } as unknown as Pick<AggregateRepository, 'load' | 'cachedOrInitial' | 'latestSeen'>;
  }
}

const context: CommandContext = { commandId: 'c-000001', actor: 't', now: new Date(0).toISOString() };

/** A command that needs site `dep` to exist, read with `options`; counts its decisions. */
function needsSite(options?: Parameters<AggregateLoader>[2]) {
  const counts = { dependencies: 0, decisions: 0 };
  const command = {
    dependencies: async (_payload: unknown, load: AggregateLoader) => (counts.dependencies++, load(siteAggregate, 'dep', options)),
    decide: (_payload: unknown, _state: unknown, { dependencies }: { dependencies: unknown }) => {
      counts.decisions++;
      if (!(dependencies as SiteState).exists) throw new DomainError('NOT_FOUND', 'site dep does not exist');
      return [{ type: 'Decided', data: {} }];
    },
  };
  return { command, counts };
}

describe('DependencyFreshness: how fresh the other aggregates a decision reads are', () => {
  it('given a dependency seen lately, when the command is decided, then it is read from what the process saw, not the log', async () => {
    const places = new Places();
    places.seen = snapshot(true);
    const { command } = needsSite();
    const decision = await new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', false);
    expect(decision).toEqual({ events: [{ type: 'Decided', data: {} }] });
    expect(places.reads).toEqual(['latestSeen']);
  });

  it('given a settled dependency the process holds, then it is read from the cache; given none held, from what it saw', async () => {
    const held = new Places();
    held.cache = snapshot(true, 4);
    await new DependencyFreshness(needsSite({ settled: true }).command, {}, held.asRepository()).decide({}, context, 'replica', false);
    expect(held.reads).toEqual(['cache']);

    const none = new Places();
    none.seen = snapshot(true);
    await new DependencyFreshness(needsSite({ settled: true }).command, {}, none.asRepository()).decide({}, context, 'replica', false);
    expect(none.reads).toEqual(['cache', 'latestSeen']);
  });

  it('given a dependency asked for fresh, then it is read from the log where the attempt reads', async () => {
    const places = new Places();
    places.log = snapshot(true);
    await new DependencyFreshness(needsSite({ fresh: true }).command, {}, places.asRepository()).decide({}, context, 'leader', false);
    expect(places.reads).toEqual(['load@leader']);
  });

  it('given a stale cached dependency, when the decision refuses, then it is decided once more on a fresh read', async () => {
    const places = new Places();
    places.log = snapshot(true);
    const { command, counts } = needsSite();
    const decision = await new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', false);
    expect(decision).toEqual({ events: [{ type: 'Decided', data: {} }] });
    expect(places.reads).toEqual(['latestSeen', 'load@replica']);
    expect(counts.decisions).toBe(2);
  });

  it('given fresh dependencies that still refuse, then the refusal is the answer, and the next attempt reads them again where it reads', async () => {
    const places = new Places();
    const { command, counts } = needsSite();
    const freshness = new DependencyFreshness(command, {}, places.asRepository());
    const first = await freshness.decide({}, context, 'replica', false);
    expect(first).toEqual({ refused: expect.any(DomainError) });
    expect(counts.decisions).toBe(2);
    await freshness.decide({}, context, 'leader', false);
    expect(places.reads).toEqual(['latestSeen', 'load@replica', 'load@leader']);
    expect(counts.decisions).toBe(3);
  });

  it('given a refusal decided on the guess, then it is answered as it is: the guess is decided again on a read first', async () => {
    const places = new Places();
    places.log = snapshot(true);
    const { command, counts } = needsSite();
    const decision = await new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', true);
    expect(decision).toEqual({ refused: expect.any(DomainError) });
    expect(places.reads).toEqual(['latestSeen']);
    expect(counts.decisions).toBe(1);
  });

  it('given an error that is no refusal (a bug, a platform error), then it is answered without a fresh read', async () => {
    const places = new Places();
    const command = {
      ...needsSite().command,
      decide: () => {
        throw new PlatformError('UNAVAILABLE', 'down');
      },
    };
    const decision = await new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', false);
    expect(decision).toEqual({ refused: expect.any(PlatformError) });
    expect(places.reads).toEqual(['latestSeen']);
  });

  it('given dependencies read once, when the same basis is asked again (a conflict on the append), then they are not read again', async () => {
    const places = new Places();
    places.seen = snapshot(true);
    const { command, counts } = needsSite();
    const freshness = new DependencyFreshness(command, {}, places.asRepository());
    await freshness.decide({}, context, 'replica', true);
    await freshness.decide({}, context, 'leader', false);
    expect(counts).toEqual({ dependencies: 1, decisions: 2 });
  });

  it('given a command without dependencies, then it is decided with none, and a refusal is answered as it is', async () => {
    const places = new Places();
    let seen: unknown = 'unset';
    const command = {
      decide: (_p: unknown, _s: unknown, ctx: { dependencies: unknown }) => {
        seen = ctx.dependencies;
        throw new DomainError('NOT_FOUND', 'no');
      },
    };
    const decision = await new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', false);
    expect(decision).toEqual({ refused: expect.any(DomainError) });
    expect(seen).toBeUndefined();
    expect(places.reads).toEqual([]);
  });

  it('given a dependency that cannot be read, then that error is thrown, not answered as a refusal', async () => {
    const places = new Places();
    const command = { ...needsSite().command, dependencies: async () => Promise.reject(new PlatformError('UNAVAILABLE', 'log down')) };
    await expect(new DependencyFreshness(command, {}, places.asRepository()).decide({}, context, 'replica', false)).rejects.toThrow('log down');
  });
});
