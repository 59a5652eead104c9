import type { StoredEvent } from '../../../schemas/envelope.ts';

/** What a command already produced, so a retried command id answers the original result. */
export interface AppliedCommand {
  seq: number;
  events: Pick<StoredEvent, 'type' | 'version' | 'data'>[];
  /** Which command it was, and the digest of the client request behind it (idempotency keys only). */
  commandName: string;
  requestDigest: string | undefined;
}

/** Ids per generation; the newest `GENERATIONS` full ones are kept besides the one filling up. */
const GENERATION = 16;
const GENERATIONS = 8;

/**
 * The command ids an aggregate's latest messages answered (between 128 and 143 of them), beyond JetStream's
 * time-bounded duplicate window. Every append adds one to a snapshot that stays valid, so this is persistent: an
 * addition copies only the generation filling up, and full generations are shared between snapshots. (A plain map
 * copied per append cost a copy of 128 entries on every command: measured in the command service's profile.)
 */
export class RememberedCommands {
  static readonly none = new RememberedCommands([], new Map());

  private constructor(
    /** Full generations, oldest first. */
    private readonly full: readonly ReadonlyMap<string, AppliedCommand>[],
    private readonly filling: ReadonlyMap<string, AppliedCommand>,
  ) {}

  get(commandId: string): AppliedCommand | undefined {
    const found = this.filling.get(commandId);
    if (found) return found;
    for (let i = this.full.length - 1; i >= 0; i--) {
      const applied = this.full[i]!.get(commandId);
      if (applied) return applied;
    }
    return undefined;
  }

  /**
   * The stream sequence of the oldest command kept once one more is added, undefined when that one would be the
   * oldest. A read from there rebuilds the same generations (they fill from the oldest kept), which is what a message's
   * carried state records (`aggregateState.ts`).
   */
  oldestKeptWithOneMore(): number | undefined {
    const kept = this.filling.size + 1 === GENERATION ? [...this.full, this.filling].slice(-GENERATIONS) : [...this.full, this.filling];
    for (const generation of kept) {
      const first = generation.values().next();
      if (!first.done) return first.value.seq;
    }
    return undefined;
  }

  with(commandId: string, applied: AppliedCommand): RememberedCommands {
    const filling = new Map(this.filling).set(commandId, applied);
    return filling.size < GENERATION
      ? new RememberedCommands(this.full, filling)
      : new RememberedCommands([...this.full, filling].slice(-GENERATIONS), new Map());
  }
}
