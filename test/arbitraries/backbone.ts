import fc from 'fast-check';
import { projectEntry, type ProjectedMessage } from '../../services/projectors/applyBatch.ts';
import type { EventBatch, StoredEvent } from '../../schemas/envelope.ts';
import { Subjects } from '../../schemas/subjects.ts';
import {
  resolveAggregate,
  type AggregateDefinition,
  type CommandDefinition,
  type DomainEventLike,
} from '../../services/platform/commands/commandDefinition.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { DomainError } from '../../schemas/platformError.ts';

/** The small id space: collisions (duplicate creates, enrolls at missing sites, unknown nodes) are the point. */
export const SITE_IDS = ['s0', 's1', 's2'] as const;
export const NODE_IDS = ['n0', 'n1', 'n2', 'n3'] as const;
export const CIDRS = ['10.0.0.0/24', '10.1.0.0/16', '192.168.7.0/28'] as const;
export const REASONS = ['disk swap', 'firmware', '', 'rack move'] as const;

/** A command as a client (or the workflow engine) sends it; a retry repeats an earlier command with its command id. */
export interface GeneratedCommand {
  readonly name: string;
  readonly payload: Record<string, unknown>;
  readonly commandId: string;
  /** Index of the command this one retries, if it is a retry. */
  readonly retryOf?: number;
}

export type Fresh = Omit<GeneratedCommand, 'commandId' | 'retryOf'>;
type Step = { kind: 'new'; command: Fresh } | { kind: 'retry'; pick: number };

export const withoutUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const siteCreateArb: fc.Arbitrary<Fresh> = fc
  .record({
    siteId: fc.constantFrom(...SITE_IDS),
    name: fc.constantFrom('DC one', 'Edge 2', 'Lab'),
    provisioningCidrs: fc.option(fc.subarray([...CIDRS]), { nil: undefined }),
  })
  .map((p) => ({ name: 'site.create', payload: withoutUndefined(p) }));

export const enrollArb: fc.Arbitrary<Fresh> = fc
  .record({
    // Omitted now and then: the node id is then derived from the command id.
    nodeId: fc.option(fc.constantFrom(...NODE_IDS), { freq: 6, nil: undefined }),
    siteId: fc.constantFrom(...SITE_IDS),
    bmc: fc.record({
      address: fc.constantFrom('https://10.0.0.21', 'http://bmc.lab:8443'),
      credentialsRef: fc.constantFrom('secret:bmc-a', 'secret:bmc-b'),
    }),
    hardwareProfile: fc.constantFrom('default', 'dmtf-public-tower'),
    macs: fc.uniqueArray(fc.constantFrom('52:54:00:AA:BB:01', '52-54-00-aa-bb-02', '52:54:00:aa:bb:03'), { minLength: 1, maxLength: 2 }),
  })
  .map((p) => ({ name: 'metal.enroll', payload: withoutUndefined(p) }));

export const setMaintenanceArb: fc.Arbitrary<Fresh> = fc
  .record({
    nodeId: fc.constantFrom(...NODE_IDS),
    on: fc.boolean(),
    reason: fc.option(fc.constantFrom(...REASONS), { nil: undefined }),
  })
  .map((p) => ({ name: 'metal.setMaintenance', payload: withoutUndefined(p) }));

/** Label changes that collide: the same few keys set, removed and set again; now and then a reserved key, refused. */
export const setLabelsArb: fc.Arbitrary<Fresh> = fc
  .record({
    nodeId: fc.constantFrom(...NODE_IDS),
    set: fc.option(fc.dictionary(fc.constantFrom('zone', 'rack', 'example.com/gpu', 'bc.dev/site'), fc.constantFrom('a', 'b', '')), { nil: undefined }),
    remove: fc.option(fc.subarray(['zone', 'rack']), { nil: undefined }),
  })
  .map((p) => ({ ...p, remove: p.remove?.filter((key) => !p.set || !Object.hasOwn(p.set, key)) }))
  .map((p) => ({ name: 'metal.setLabels', payload: withoutUndefined(p) }));

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: siteCreateArb.map((command) => ({ kind: 'new' as const, command })), weight: 2 },
  { arbitrary: enrollArb.map((command) => ({ kind: 'new' as const, command })), weight: 3 },
  { arbitrary: setMaintenanceArb.map((command) => ({ kind: 'new' as const, command })), weight: 5 },
  { arbitrary: setLabelsArb.map((command) => ({ kind: 'new' as const, command })), weight: 2 },
  { arbitrary: fc.nat().map((pick) => ({ kind: 'retry' as const, pick })), weight: 1 },
);

/** Random valid command sequences over the small id space; some will be refused, some are retries. */
export function commandSequenceArb(options: { minLength?: number; maxLength?: number; idPrefix?: string } = {}): fc.Arbitrary<GeneratedCommand[]> {
  const prefix = options.idPrefix ?? 'cmd';
  // A short prologue of creates and enrolls makes later commands land on existing aggregates more often.
  const prologue = fc.array(
    fc.oneof(siteCreateArb, enrollArb).map((command): Step => ({ kind: 'new', command })),
    { maxLength: 4 },
  );
  const body = fc.array(stepArb, { minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 40, size: 'medium' });
  return fc.tuple(prologue, body).map(([head, tail]) => {
    const steps = [...head, ...tail].slice(0, Math.max(options.maxLength ?? 40, options.minLength ?? 0));
    const out: GeneratedCommand[] = [];
    const fresh: number[] = [];
    for (const step of steps) {
      if (step.kind === 'retry') {
        if (fresh.length === 0) continue;
        const of = fresh[step.pick % fresh.length]!;
        out.push({ ...out[of]!, retryOf: of });
        continue;
      }
      fresh.push(out.length);
      out.push({ ...step.command, commandId: `${prefix}-${String(out.length).padStart(4, '0')}` });
    }
    return out;
  });
}

/** What the command bus answers for one command, reduced to what is deterministic. */
export type Outcome =
  | { kind: 'appended'; seq: number; events: Pick<StoredEvent, 'type' | 'version' | 'data'>[] }
  | { kind: 'duplicate'; seq: number }
  | { kind: 'noop' }
  | { kind: 'refused'; code: string };

interface Snapshot {
  state: unknown;
  seq: number;
  commands: Map<string, number>;
}

export interface Simulation {
  readonly messages: ProjectedMessage[];
  readonly batches: { seq: number; subject: string; batch: EventBatch }[];
  readonly outcomes: Outcome[];
  /** Aggregate state by subject after the whole sequence. */
  readonly states: Map<string, unknown>;
  /** For each appended command: the re-decision right after its events were folded (must refuse or be []). */
  readonly redecisions: { commandId: string; result: Decision }[];
}

const byName = new Map(allCommands.map((c) => [c.name, c]));
const BASE_TIME = Date.UTC(2025, 0, 1);

/** Folds stored events into an aggregate state exactly as the repository does (catalog read, then evolve). */
export function foldStored<S>(
  aggregate: AggregateDefinition<S, any>,
  events: readonly Pick<StoredEvent, 'type' | 'version' | 'data'>[],
  from: S = aggregate.initialState,
): S {
  let state = from;
  for (const e of events) state = aggregate.evolve(state, aggregate.catalog.read(e));
  return state;
}

type Decision = { events: readonly DomainEventLike[] } | { code: string };

function decideSafely(command: CommandDefinition, payload: unknown, state: unknown, context: Parameters<CommandDefinition['decide']>[2]): Decision {
  try {
    return { events: command.decide(payload, state, context) };
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code };
    throw err;
  }
}

/**
 * The real deciders and evolves without NATS, mirroring `CommandBus.decideAndAppend`: one message per accepted command
 * on the aggregate's subject, a remembered command id answers as a duplicate. `run` takes one command at a time, so a
 * workload can be planned against the states the commands so far produced (`stateOf`).
 */
export class DeciderModel {
  readonly #snapshots = new Map<string, Snapshot>();
  readonly sim: Simulation = { messages: [], batches: [], outcomes: [], states: new Map(), redecisions: [] };

  #snapshotOf(aggregate: AggregateDefinition<any, any>, id: string) {
    const subject = Subjects.aggregateEvents(aggregate.module, aggregate.type, id);
    let s = this.#snapshots.get(subject);
    if (!s) this.#snapshots.set(subject, (s = { state: aggregate.initialState, seq: 0, commands: new Map() }));
    return { subject, snapshot: s };
  }

  /** The aggregate's state after every command run so far. */
  stateOf<S>(aggregate: AggregateDefinition<S, any>, id: string): S {
    return this.#snapshotOf(aggregate, id).snapshot.state as S;
  }

  async run(request: GeneratedCommand): Promise<Outcome> {
    const outcome = await this.#decide(request, this.sim.outcomes.length);
    this.sim.outcomes.push(outcome);
    return outcome;
  }

  async #decide(request: GeneratedCommand, index: number): Promise<Outcome> {
    const sim = this.sim;
    const command = byName.get(request.name);
    if (!command) return { kind: 'refused', code: 'UNKNOWN_COMMAND' };
    const parsed = command.schema.safeParse(request.payload);
    if (!parsed.success) return { kind: 'refused', code: 'VALIDATION_FAILED' };
    const base = { commandId: request.commandId, actor: 'model', now: new Date(BASE_TIME + index * 1_000).toISOString() };
    const { subject, snapshot } = this.#snapshotOf(command.aggregate, command.aggregateId(parsed.data, base));
    const seen = snapshot.commands.get(request.commandId);
    if (seen !== undefined) return { kind: 'duplicate', seq: seen };
    const dependencies = command.dependencies
      ? await command.dependencies(parsed.data, async (agg, id) => this.#snapshotOf(resolveAggregate(agg), id).snapshot.state as never)
      : undefined;
    const context = { ...base, dependencies };
    const decided = decideSafely(command, parsed.data, snapshot.state, context);
    if ('code' in decided) return { kind: 'refused', code: decided.code };
    if (decided.events.length === 0) return { kind: 'noop' };
    const seq = sim.messages.length + 1;
    const aggregateType = `${command.aggregate.module}.${command.aggregate.type}`;
    const events: StoredEvent[] = decided.events.map((event, k) => ({
      ...command.aggregate.catalog.write(event as never),
      metadata: {
        eventId: `evt-${seq}-${k}`,
        aggregateType,
        aggregateId: subject.split('.').at(-1)!,
        commandId: request.commandId,
        commandName: command.name,
        correlationId: request.commandId,
        causationId: request.commandId,
        actor: base.actor,
        time: base.now,
      },
    }));
    const batch: EventBatch = JSON.parse(JSON.stringify({ events }));
    sim.batches.push({ seq, subject, batch });
    sim.messages.push(projectEntry({ seq, subject, messageId: request.commandId, batch }).message);
    snapshot.state = foldStored(command.aggregate, batch.events, snapshot.state);
    snapshot.seq = seq;
    snapshot.commands.set(request.commandId, seq);
    sim.redecisions.push({ commandId: request.commandId, result: decideSafely(command, parsed.data, snapshot.state, context) });
    return { kind: 'appended', seq, events: batch.events.map(({ type, version, data }) => ({ type, version, data })) };
  }

  /** The simulation, with every aggregate's final state. */
  finish(): Simulation {
    for (const [subject, s] of this.#snapshots) this.sim.states.set(subject, s.state);
    return this.sim;
  }
}

/** Runs a command sequence through the real deciders and evolves (see `DeciderModel`). */
export async function simulate(commands: readonly GeneratedCommand[]): Promise<Simulation> {
  const model = new DeciderModel();
  for (const command of commands) await model.run(command);
  return model.finish();
}

/**
 * Outcomes with the fields a decider takes from its clock (`now`) blanked: the model's clock is the command's index,
 * the bus's is the wall clock, and these fields are the only place the two differ.
 */
export function withoutClock(outcomes: readonly Outcome[]): Outcome[] {
  const clockFields = new Set(['startedAt', 'requestedAt', 'expiresAt', 'placedAt', 'unplacedAt', 'relocatedAt']);
  return outcomes.map((o) =>
    o.kind !== 'appended'
      ? o
      : {
          ...o,
          events: o.events.map((e) => ({
            ...e,
            data: Object.fromEntries(Object.entries(e.data as Record<string, unknown>).map(([k, v]) => [k, clockFields.has(k) ? '<clock>' : v])),
          })),
        },
  );
}

/** How a consumer may deliver a log: cut into batches, with redelivered old messages and duplicates mixed in. */
export interface DeliveryPlan {
  cuts: number[];
  extras: { batch: number; pick: number; pos: number }[];
  replays: { after: number; picks: number[] }[];
}

export const deliveryPlanArb: fc.Arbitrary<DeliveryPlan> = fc.record({
  cuts: fc.array(fc.nat(), { maxLength: 12 }),
  extras: fc.array(fc.record({ batch: fc.nat(), pick: fc.nat(), pos: fc.nat() }), { maxLength: 30 }),
  replays: fc.array(fc.record({ after: fc.nat(), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }) }), { maxLength: 5 }),
});

/** Splits `messages` into ordered batches at the plan's cuts (no redelivery). */
export function chunk<T>(messages: readonly T[], cuts: readonly number[]): T[][] {
  if (messages.length === 0) return [];
  const points = [...new Set(cuts.map((c) => 1 + (c % messages.length)))].sort((a, b) => a - b);
  const batches: T[][] = [];
  let from = 0;
  for (const p of [...points, messages.length]) {
    if (p > from) batches.push(messages.slice(from, p));
    from = Math.max(from, p);
  }
  return batches;
}

/**
 * Applies a plan: first deliveries stay in log order; copies of a message go anywhere after its first delivery,
 * and whole batches of old messages, in random order, are replayed between batches.
 */
export function deliver<T>(messages: readonly T[], plan: DeliveryPlan): T[][] {
  const batches = chunk(messages, plan.cuts);
  const out: T[][] = [];
  let delivered = 0;
  for (const [b, batch] of batches.entries()) {
    const list: T[] = [...batch];
    for (const extra of plan.extras.filter((e) => e.batch % batches.length === b)) {
      const pool = delivered + batch.length;
      const index = extra.pick % pool;
      const earliest = index < delivered ? 0 : list.indexOf(messages[index]!) + 1;
      list.splice(earliest + (extra.pos % (list.length - earliest + 1)), 0, messages[index]!);
    }
    out.push(list);
    delivered += batch.length;
    for (const replay of plan.replays.filter((r) => r.after % batches.length === b)) {
      out.push(replay.picks.map((p) => messages[p % delivered]!));
    }
  }
  return out;
}
