import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandResult } from '../../../schemas/api.ts';
import type { StoredEvent } from '../../../schemas/envelope.ts';
import { PlatformError, issuesOf } from '../../../schemas/platformError.ts';
import { ConcurrencyError } from '../errors.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { AggregateRepository } from './aggregateRepository.ts';
import { AttemptLadder } from './attemptLadder.ts';
import type { CommandContext, CommandDefinition } from './commandDefinition.ts';
import { DependencyFreshness } from './dependencyFreshness.ts';
import { rememberedAnswer, storedAnswer } from './duplicateResolution.ts';
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
 * message id (a stale cache is refused by that expectation, then read and decided again). Commands on one aggregate
 * are serialised inside this process; conflicts with other processes are re-read and retried a bounded number of
 * times. Each of those choices is a policy of its own: `AttemptLadder` (which state an attempt decides on),
 * `DependencyFreshness` (how fresh the other aggregates it reads are), `duplicateResolution.ts` (a command id seen before).
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

  /**
   * One command, serialised with the others on its aggregate: decided on the state the attempt ladder names (guess,
   * replica, leader), with dependencies as fresh as `DependencyFreshness` says, and answered from what was stored when
   * its id was seen before (`duplicateResolution.ts`).
   */
  private async decideAndAppend(
    command: CommandDefinition,
    payload: unknown,
    context: CommandContext,
    aggregateId: string,
    request: CommandRequest,
  ): Promise<CommandResult> {
    const aggregate = { type: `${command.aggregate.module}.${command.aggregate.type}`, id: aggregateId };
    const identity = { commandName: command.name, requestDigest: request.requestDigest };
    const answer = (seq: number, duplicate: boolean, events: CommandResult['events']): CommandResult => ({
      commandId: context.commandId,
      aggregate,
      seq,
      duplicate,
      events,
    });
    const ladder = new AttemptLadder({ readsMayLag: this.store.readsMayLag, retries: this.options.retries });
    const dependencies = new DependencyFreshness(command, payload, this.repository);
    const subject = this.repository.subjectOf(command.aggregate, aggregateId);
    for (;;) {
      // A state loaded from a message's carried state reads its remembered command ids before they are asked.
      const snapshot = await this.repository.withCommands(
        command.aggregate,
        aggregateId,
        ladder.guessing
          ? this.repository.cachedOrInitial(command.aggregate, aggregateId)
          : await this.repository.load(command.aggregate, aggregateId, ladder.from),
        ladder.from,
      );
      const remembered = rememberedAnswer(context.commandId, snapshot.commands.get(context.commandId), identity);
      if (remembered) return answer(remembered.seq, true, remembered.events);

      const decision = await dependencies.decide(snapshot.state, context, ladder.from, ladder.guessing);
      if ('refused' in decision) {
        if (ladder.climbUnlessFinal()) continue;
        throw decision.refused;
      }
      if (decision.events.length === 0) {
        if (ladder.climbUnlessFinal()) continue;
        return answer(snapshot.seq, false, []);
      }

      const events = stampedEvents(command, aggregate, decision.events, context, request);
      try {
        const after = this.repository.stateAfter(command.aggregate, snapshot, events);
        const ack = await this.store.append(
          subject,
          { events },
          { expectedSeq: snapshot.seq, msgId: context.commandId, position: snapshot.length + 1, state: after.carried },
        );
        if (ack.duplicate) {
          const stored = await storedAnswer(this.store, ack.seq, subject, context.commandId, identity);
          return answer(stored.seq, true, stored.events);
        }
        this.repository.applyAppended(command.aggregate, aggregateId, snapshot, ack.seq, events, after);
        return answer(
          ack.seq,
          false,
          events.map(({ type, version, data }) => ({ type, version, data })),
        );
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err;
        const next = ladder.afterConflict();
        if (!next.retry) throw err;
        if (next.backoffMs !== undefined) await sleep(next.backoffMs);
      }
    }
  }
}

/** The decided events as the log stores them: validated at the current version, with the command's metadata. */
function stampedEvents(
  command: CommandDefinition,
  aggregate: { type: string; id: string },
  decided: readonly unknown[],
  context: CommandContext,
  request: CommandRequest,
): StoredEvent[] {
  return decided.map((event) => ({
    ...command.aggregate.catalog.write(event as never),
    metadata: {
      eventId: randomUUID(),
      aggregateType: aggregate.type,
      aggregateId: aggregate.id,
      commandId: context.commandId,
      commandName: command.name,
      correlationId: request.correlationId ?? context.commandId,
      causationId: request.causationId ?? context.commandId,
      actor: context.actor,
      time: context.now,
      ...(request.requestDigest !== undefined ? { requestDigest: request.requestDigest } : {}),
    },
  }));
}
