import { DomainError } from '../../../schemas/platformError.ts';
import type { ReadFrom } from '../eventStore/eventStore.ts';
import type { AggregateRepository } from './aggregateRepository.ts';
import { resolveAggregate, type AggregateLoader, type CommandContext, type CommandDefinition } from './commandDefinition.ts';

/** What the other aggregates a decision depends on were read from: this process's cache, or the log at a replica or the leader. */
type DependencyBasis = 'cache' | ReadFrom;

/** The answer of one decision: the events it decided, or the error it refused with. */
export type Decision = { readonly events: readonly unknown[] } | { readonly refused: unknown };

/**
 * How fresh a command's dependencies are read. They come from this process's cache first (cheap, and right for facts
 * that do not go back); a refusal decided on them is decided once more on fresh reads, since another process may have
 * changed them since. They are read once per basis: a conflict on the append says the aggregate moved, not that they did.
 */
export class DependencyFreshness {
  #fresh = false;
  #read: { readonly basis: DependencyBasis; readonly value: unknown } | undefined;

  constructor(
    private readonly command: Pick<CommandDefinition, 'dependencies' | 'decide'>,
    private readonly payload: unknown,
    private readonly repository: Pick<AggregateRepository, 'load' | 'cachedOrInitial' | 'latestSeen'>,
  ) {}

  /**
   * The command decided on `state` with its dependencies; a `DomainError` decided on cached dependencies (never on a
   * guess: that is decided again on a read first) is decided once more on fresh ones read at `from`. A dependency that
   * cannot be read throws: that is no refusal.
   */
  async decide(state: unknown, context: CommandContext, from: ReadFrom, guessing: boolean): Promise<Decision> {
    for (;;) {
      const dependencies = await this.dependencies(from);
      try {
        return { events: this.command.decide(this.payload, state, { ...context, dependencies }) };
      } catch (err) {
        if (guessing || this.#fresh || !this.command.dependencies || !(err instanceof DomainError)) return { refused: err };
        this.#fresh = true;
      }
    }
  }

  /** The dependencies as of the current basis, read again only when the basis changed. */
  private async dependencies(from: ReadFrom): Promise<unknown> {
    const basis: DependencyBasis = this.#fresh ? from : 'cache';
    if (this.command.dependencies && this.#read?.basis !== basis) {
      this.#read = { basis, value: await this.command.dependencies(this.payload, this.loader(basis, from)) };
    }
    return this.#read?.value;
  }

  private loader(basis: DependencyBasis, from: ReadFrom): AggregateLoader {
    return async (agg, id, options) => {
      if (basis !== 'cache' || options?.fresh) return (await this.repository.load(agg, id, from)).state;
      // `settled` facts never change once the aggregate exists: any snapshot held will do, without asking the log.
      const held = options?.settled ? this.repository.cachedOrInitial(resolveAggregate(agg), id) : undefined;
      return (held && held.seq > 0 ? held : await this.repository.latestSeen(agg, id)).state;
    };
  }
}
