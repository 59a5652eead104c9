import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandResult } from '../../../schemas/api.ts';
import type { StoredEvent } from '../../../schemas/envelope.ts';
import { ConcurrencyError, DomainError, PlatformError, issuesOf } from '../errors.ts';
import type { EventStore, ReadFrom } from '../eventStore/eventStore.ts';
import { AggregateRepository, type AggregateSnapshot } from './aggregateRepository.ts';
import { resolveAggregate, type AggregateLoader, type CommandContext, type CommandDefinition } from './commandDefinition.ts';
import { KeyedMutex } from './keyedMutex.ts';
import { canonicalJson } from '../../../schemas/canonicalJson.ts';

/** A command as it arrives from any transport, before validation. */
export interface CommandRequest {
  name: string;
  payload: unknown;
  /** The command id as the (trusted) sender chose it: engine commands derive theirs from what they answer. */
  commandId?: string;
  /**
   * A client's `Idempotency-Key`: the command id is derived from it and the actor, so two callers never share one,
   * and a key reused for another command, aggregate or body is refused (`IDEMPOTENCY_KEY_REUSED`).
   */
  idempotencyKey?: string;
  /** What makes a repeat "the same request" for the key; default the SHA-256 of the validated payload. */
  requestDigest?: string;
  correlationId?: string;
  causationId?: string;
  actor: string;
}

const COMMAND_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** The command id of a client's idempotency key: namespaced by the actor, so no other caller can ever produce it. */
export function idempotentCommandId(actor: string, key: string): string {
  return `idem-${createHash('sha256').update(`${actor}\n${key}`).digest('base64url')}`;
}

/** The default request digest of a keyed command: SHA-256 of its validated payload. */
export const payloadDigest = (payload: unknown): string => createHash('sha256').update(canonicalJson(payload)).digest('base64url');

/**
 * Runs commands: validate, decide on the cached aggregate, append with the expected sequence and the command id as
 * message id (a stale cache is refused by that expectation, then read and decided again). Commands on one aggregate are serialised inside this process; conflicts with other processes
 * are re-read and retried a bounded number of times.
 */
export class CommandBus {
  readonly repository: AggregateRepository;
  readonly #commands = new Map<string, CommandDefinition>();
  readonly #locks = new KeyedMutex();

  constructor(
    private readonly store: EventStore,
    commands: readonly CommandDefinition[],
    private readonly options: { retries: number },
  ) {
    this.repository = new AggregateRepository(store);
    for (const c of commands) this.#commands.set(c.name, c);
  }

  names(): string[] {
    return [...this.#commands.keys()];
  }

  definition(name: string): CommandDefinition | undefined {
    return this.#commands.get(name);
  }

  async execute(request: CommandRequest): Promise<CommandResult> {
    const command = this.#commands.get(request.name);
    if (!command) throw new PlatformError('UNKNOWN_COMMAND', `unknown command "${request.name}"; known: ${this.names().join(', ')}`);
    for (const [what, id] of [
      ['command id', request.commandId],
      ['Idempotency-Key', request.idempotencyKey],
    ] as const) {
      if (id !== undefined && !COMMAND_ID.test(id)) throw new PlatformError('VALIDATION_FAILED', `${what} must be 8-64 chars of A-Z, a-z, 0-9, "-" or "_"`);
    }
    const parsed = command.schema.safeParse(request.payload);
    if (!parsed.success) {
      throw new PlatformError('VALIDATION_FAILED', `invalid ${command.name} command`, { issues: issuesOf(parsed.error) });
    }
    const keyed = request.idempotencyKey !== undefined;
    const context: CommandContext = {
      commandId: keyed ? idempotentCommandId(request.actor, request.idempotencyKey!) : (request.commandId ?? randomUUID()),
      actor: request.actor,
      now: new Date().toISOString(),
    };
    const requestDigest = keyed ? (request.requestDigest ?? payloadDigest(parsed.data)) : undefined;
    const aggregateId = command.aggregateId(parsed.data, context);
    const subject = this.repository.subjectOf(command.aggregate, aggregateId);
    return this.#locks.run(subject, () => this.decideAndAppend(command, parsed.data, context, aggregateId, { ...request, requestDigest }));
  }

  private async decideAndAppend(
    command: CommandDefinition,
    payload: unknown,
    context: CommandContext,
    aggregateId: string,
    request: CommandRequest,
  ): Promise<CommandResult> {
    const aggregate = { type: `${command.aggregate.module}.${command.aggregate.type}`, id: aggregateId };
    // Decide first on what this process holds (its cached snapshot; the initial state for an aggregate it never saw,
    // most often a new one) without asking the log: the append's expected sequence checks that guess, and a stale one
    // is refused and read again. Only a decision that appends is checked that way; any other answer from a guess
    // (a refusal, a no-op) is decided again on the real state. A process that wrote an aggregate last reads nothing.
    let guess: AggregateSnapshot<unknown> | undefined = this.repository.cachedOrInitial(command.aggregate, aggregateId);
    // Dependencies come from this process's cache first (cheap, and right for facts that do not go back); a refusal
    // decided on them is decided once more on fresh reads, since another process may have changed them since.
    let freshDependencies = false;
    // Dependencies are read once per basis: a conflict on the append says the aggregate moved, not that they did.
    let dependencies: { basis: 'cache' | ReadFrom; value: unknown } | undefined;
    // The state just read, decided on once more with fresh dependencies without reading it again.
    let reread: AggregateSnapshot<unknown> | undefined;
    // Reads go to any replica until one may have answered behind the log: after a conflict, and before a refusal or
    // a no-op is answered, the aggregate is read at the stream leader (on a cluster; with one replica they are one).
    let from: ReadFrom = 'replica';
    const readsMayLag = this.store.readsMayLag;
    for (let attempt = 0; ;) {
      const snapshot = guess ?? reread ?? (await this.repository.load(command.aggregate, aggregateId, from));
      const guessed = guess !== undefined;
      const final = !guessed && (from === 'leader' || !readsMayLag);
      guess = undefined;
      reread = undefined;
      const applied = snapshot.commands.get(context.commandId);
      if (applied) {
        assertSameRequest(context.commandId, applied, { commandName: command.name, requestDigest: request.requestDigest });
        return { commandId: context.commandId, aggregate, seq: applied.seq, duplicate: true, events: applied.events };
      }

      const basis = freshDependencies ? from : 'cache';
      if (command.dependencies && dependencies?.basis !== basis) {
        const load: AggregateLoader = async (agg, id, options) => {
          if (basis !== 'cache' || options?.fresh) return (await this.repository.load(agg, id, from)).state;
          const held = options?.settled ? this.repository.cachedOrInitial(resolveAggregate(agg), id) : undefined;
          return (held && held.seq > 0 ? held : await this.repository.latestSeen(agg, id)).state;
        };
        dependencies = { basis, value: await command.dependencies(payload, load) };
      }
      let decided: readonly unknown[];
      try {
        decided = command.decide(payload, snapshot.state, { ...context, dependencies: dependencies?.value });
      } catch (err) {
        if (guessed) continue;
        if (command.dependencies && !freshDependencies && err instanceof DomainError) {
          freshDependencies = true;
          reread = snapshot;
          continue;
        }
        if (!final) {
          from = 'leader';
          continue;
        }
        throw err;
      }
      if (decided.length === 0) {
        if (!final) {
          if (!guessed) from = 'leader';
          continue;
        }
        return { commandId: context.commandId, aggregate, seq: snapshot.seq, duplicate: false, events: [] };
      }

      const events: StoredEvent[] = decided.map((event) => ({
        ...command.aggregate.catalog.write(event as never),
        metadata: {
          eventId: randomUUID(),
          aggregateType: aggregate.type,
          aggregateId,
          commandId: context.commandId,
          commandName: command.name,
          correlationId: request.correlationId ?? context.commandId,
          causationId: request.causationId ?? context.commandId,
          actor: context.actor,
          time: context.now,
          ...(request.requestDigest !== undefined ? { requestDigest: request.requestDigest } : {}),
        },
      }));
      const subject = this.repository.subjectOf(command.aggregate, aggregateId);
      try {
        const ack = await this.store.append(subject, { events }, { expectedSeq: snapshot.seq, msgId: context.commandId });
        if (ack.duplicate) {
          // Stored earlier under this id (another process, or a reply that got lost): answer what was stored, and
          // only when it is this very command: JetStream dedupes message ids across every subject of the stream.
          const stored = await this.store.readAt(ack.seq, 'leader');
          const metadata = stored?.batch?.events[0]?.metadata;
          if (!stored?.batch || stored.subject !== subject) {
            throw new PlatformError('IDEMPOTENCY_KEY_REUSED', `command id ${context.commandId} was used for another aggregate`);
          }
          assertSameRequest(
            context.commandId,
            { commandName: metadata?.commandName, requestDigest: metadata?.requestDigest },
            { commandName: command.name, requestDigest: request.requestDigest },
          );
          const original = stored.batch.events.map(({ type, version, data }) => ({ type, version, data }));
          return { commandId: context.commandId, aggregate, seq: ack.seq, duplicate: true, events: original };
        }
        this.repository.applyAppended(command.aggregate, aggregateId, snapshot, ack.seq, events);
        return {
          commandId: context.commandId,
          aggregate,
          seq: ack.seq,
          duplicate: false,
          events: events.map(({ type, version, data }) => ({ type, version, data })),
        };
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err;
        if (guessed) continue;
        if (readsMayLag) from = 'leader';
        if (attempt >= this.options.retries) throw err;
        await sleep(Math.random() * Math.min(1_000, 5 * 2 ** attempt));
        attempt++;
      }
    }
  }
}

/**
 * A command id answers with its stored result only for the same command (and, for a client's idempotency key, the
 * same request): anything else is a reused key, never a reason to hand out another command's events.
 */
function assertSameRequest(
  commandId: string,
  stored: { commandName?: string | undefined; requestDigest?: string | undefined },
  now: { commandName: string; requestDigest: string | undefined },
): void {
  if (stored.commandName !== now.commandName) {
    throw new PlatformError(
      'IDEMPOTENCY_KEY_REUSED',
      `command id ${commandId} was used for ${stored.commandName ?? 'another command'}, not ${now.commandName}`,
    );
  }
  if (now.requestDigest !== undefined && stored.requestDigest !== now.requestDigest) {
    throw new PlatformError('IDEMPOTENCY_KEY_REUSED', `command id ${commandId} was used for ${now.commandName} with another body`);
  }
}
