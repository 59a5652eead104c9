import { setTimeout as sleep } from 'node:timers/promises';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandResult } from '../../../schemas/api.ts';
import { autonomyCommandId, CONTROLS_ID, decisionIdOf } from '../../../schemas/autonomy/ids.ts';
import { PassMarker, PublishedSignal, type Signal } from '../../../schemas/autonomy/signals.ts';
import type { PolicyDeclaration } from '../../../schemas/autonomy/policies.ts';
import { AUTONOMY_ENGINE_DURABLE, Streams, Subjects } from '../../../schemas/subjects.ts';
import { checkBindings, type Binding } from '../../autonomy/bindings.ts';
import { controlsAggregate, type ControlsState } from '../../autonomy/controls/controls.ts';
import { decisionAggregate, type ExistingDecision } from '../../autonomy/decision/decision.ts';
import type { PolicyCatalog } from '../../autonomy/policies.ts';
import type { Sensor } from '../../autonomy/sensors/sensor.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { sendCommand } from '../../platform/commands/sendCommand.ts';
import { PlatformError } from '../../platform/errors.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import { clearanceCommand, isHoldingAction, remediationCommands } from './remediations.ts';
import { withinReplayDeadline } from '../../platform/nats/replayDeadline.ts';

export interface AutonomyEngineOptions {
  policies: PolicyCatalog;
  bindings: readonly Binding[];
  sensors: readonly Sensor[];
  settleMs: number;
  budget: number;
  budgetWindowMs: number;
  /** Fault injection for tests: called on the budget path before budget is taken; a throw must fail closed. */
  budgetFault?: () => void;
}

type Sent = { ok: true; result: CommandResult } | { ok: false; code: string; message: string };

/** Decisions acted on at once within one pass. */
const CONCURRENCY = 32;

/**
 * `autonomy-engine`: takes each pass marker from its durable (shared by replicas), reads the pass's signals, sweeps
 * expired requests, then decides. Every command it sends has an id derived from decision, episode and step, so two
 * replicas, a redelivered pass or a restart after `kill -9` send the same commands and the log keeps one of each.
 */
export class AutonomyEngine {
  readonly repository: AggregateRepository;
  readonly #bindings: ReadonlyMap<string, Binding>;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly nc: NatsConnection,
    store: EventStore,
    private readonly options: AutonomyEngineOptions,
    private readonly log: Logger,
  ) {
    const problems = checkBindings(options.bindings, options.sensors, options.policies);
    // The start-up check: a binding nobody feeds, or one to an undeclared category, is a configuration error.
    if (problems.length > 0) throw new PlatformError('VALIDATION_FAILED', `autonomy bindings refused: ${problems.join('; ')}`);
    this.repository = new AggregateRepository(store);
    this.#bindings = new Map(options.bindings.map((b) => [b.signal, b]));
  }

  async start(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    await jsm.consumers
      .add(Streams.signals.name, {
        durable_name: AUTONOMY_ENGINE_DURABLE,
        filter_subject: Subjects.allPassMarkers,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        ack_wait: 120_000_000_000,
        max_ack_pending: 4,
      })
      .catch((err: unknown) => {
        if (!/already in use|exists/i.test(String(err))) throw err;
      });
    const consumer = await jetstream(this.nc).consumers.get(Streams.signals.name, AUTONOMY_ENGINE_DURABLE);
    // One pass at a time per replica: replicas share the passes instead of one taking them all.
    this.#messages = await consumer.consume({ max_messages: 1 });
    this.#loop = (async () => {
      for await (const msg of this.#messages!) {
        const parsed = PassMarker.safeParse(msg.json());
        if (!parsed.success) {
          msg.term();
          continue;
        }
        const beat = setInterval(() => msg.working(), 10_000);
        try {
          await this.handlePass(parsed.data);
          msg.ack();
        } catch (err) {
          if (!this.#stopped) this.log.warn({ err, passId: parsed.data.passId }, 'pass not handled; redelivering');
          msg.nak(1_000);
        } finally {
          clearInterval(beat);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#messages?.close();
    await this.#loop;
  }

  /** Decides one pass: the expiry sweep first, then the pass's signals, then every open decision. */
  async handlePass(marker: PassMarker): Promise<void> {
    const signals = await this.#readSignals(marker);
    const bound = new Map<string, { signal: Signal; binding: Binding; policy: PolicyDeclaration }>();
    for (const signal of signals) {
      const binding = this.#bindings.get(signal.kind);
      const policy = binding ? this.options.policies.get(binding.category) : undefined;
      if (!binding || !policy) {
        this.log.warn({ kind: signal.kind, key: signal.key }, 'signal with no binding to a declared category: NOT_PERMITTED');
        continue;
      }
      bound.set(decisionIdOf(binding.category, signal.key), { signal, binding, policy });
    }
    const known = await this.#decisionIds();
    await this.#each(known, (id) => this.#sweep(id));
    await this.#each([...bound.keys()], async (id) => {
      const { signal, binding, policy } = bound.get(id)!;
      const payload = { category: binding.category, key: signal.key, passId: marker.passId, signal, policy, plan: binding.plan(signal) };
      const sent = await this.#send('autonomy.openDecision', payload, autonomyCommandId('open', id, marker.passId));
      if (!sent.ok) return void this.log.warn({ decisionId: id, code: sent.code, detail: sent.message }, 'decision refused');
      const opened = sent.result.events.find((e) => e.type === 'DecisionOpened')?.data as { disposition: string } | undefined;
      if (opened && !sent.result.duplicate && opened.disposition !== 'auto')
        this.#notify(policy.owner, opened.disposition === 'require' ? 'approval-requested' : opened.disposition, id, signal);
    });
    const controls = (await this.repository.load(controlsAggregate, CONTROLS_ID)).state;
    const sensorsOk = new Map(marker.sensors.map((r) => [r.sensor, r.ok]));
    await this.#each([...new Set([...known, ...bound.keys()])], async (id) => {
      const { state } = await this.repository.load(decisionAggregate, id);
      if (!state.exists) return;
      if (state.status === 'approved') return this.#start(state, controls);
      if (state.status === 'running' || state.status === 'notified' || state.status === 'blocked') {
        return this.#judge(state, marker, bound.has(id), this.#sensorOk(state.category, sensorsOk));
      }
    });
  }

  async #sweep(id: string): Promise<void> {
    const { state } = await this.repository.load(decisionAggregate, id);
    if (!state.exists || state.status !== 'pending' || state.expiresAt === null || Date.parse(state.expiresAt) > Date.now()) return;
    await this.#send('autonomy.expire', { decisionId: id, episode: state.episode }, autonomyCommandId('expire', id, state.episode));
  }

  async #start(d: ExistingDecision, controls: ControlsState): Promise<void> {
    if (controls.halted || controls.paused.includes(d.policy.owner)) return;
    const remediation = await remediationCommands(d, this.repository);
    if (!remediation || remediation.length === 0) return;
    const ref = { decisionId: d.decisionId, episode: d.episode };
    if (d.approvedBy === 'policy') {
      // Fail closed: anything but a confirmed consumption turns the decision into an approval request.
      let refusal: string | undefined;
      try {
        this.options.budgetFault?.();
        const sent = await this.#send(
          'autonomy.consumeBudget',
          { scope: d.policy.owner, windowMs: this.options.budgetWindowMs, limit: this.options.budget, ...ref },
          autonomyCommandId('budget', d.decisionId, d.episode),
        );
        if (!sent.ok) refusal = `${sent.code}: ${sent.message}`;
      } catch (err) {
        refusal = `budget path failed: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (refusal !== undefined) {
        const sent = await this.#send(
          'autonomy.requireApproval',
          { ...ref, reason: refusal.slice(0, 400) },
          autonomyCommandId('require', d.decisionId, d.episode),
        );
        if (sent.ok && sent.result.events.length > 0 && !sent.result.duplicate) this.#notify(d.policy.owner, 'approval-requested', d.decisionId, d.signal);
        return;
      }
    }
    // Sent in order, each with an id derived from decision, episode and its place: a start resumed by a later pass (or
    // another replica) sends the same commands, and the log keeps one of each.
    const ids = remediation.map((_, i) =>
      i === 0 ? autonomyCommandId('remediate', d.decisionId, d.episode) : autonomyCommandId('remediate', d.decisionId, d.episode, i),
    );
    for (const [i, command] of remediation.entries()) {
      const sent = await this.#send(command.name, command.payload, ids[i]!);
      // Infrastructure trouble, or a step that must wait for the one before it to take effect (a recreation's create
      // while the deleted instance still holds its quota): the next pass sends the same commands again.
      if (!sent.ok && (sent.code === 'UNAVAILABLE' || (i > 0 && sent.code === 'QUOTA_EXCEEDED'))) return;
      if (!sent.ok) {
        this.log.warn({ decisionId: d.decisionId, command: command.name, code: sent.code, detail: sent.message }, 'remediation refused; its outcome will say');
        break;
      }
    }
    await this.#send(
      'autonomy.recordStarted',
      {
        ...ref,
        commandName: remediation
          .map((c) => c.name)
          .join('+')
          .slice(0, 100),
        commandId: ids[0]!,
        settleMs: this.options.settleMs,
      },
      autonomyCommandId('started', d.decisionId, d.episode),
    );
  }

  async #judge(d: ExistingDecision, marker: PassMarker, signalPresent: boolean, sensorOk: boolean): Promise<void> {
    if (d.status === 'running') {
      if (d.settleUntil !== null && Date.parse(d.settleUntil) > Date.now()) return;
      if (isHoldingAction(d) && (signalPresent || !sensorOk)) return;
      const clearance = !signalPresent && sensorOk ? clearanceCommand(d) : undefined;
      if (clearance) {
        const cleared = await this.#send(clearance.name, clearance.payload, autonomyCommandId('clear', d.decisionId, d.episode));
        if (!cleared.ok && cleared.code === 'UNAVAILABLE') return;
      }
    } else if (signalPresent || !sensorOk) return;
    const sent = await this.#send(
      'autonomy.recordOutcome',
      { decisionId: d.decisionId, episode: d.episode, passId: marker.passId, signalPresent, sensorOk },
      autonomyCommandId('outcome', d.decisionId, d.episode, marker.passId),
    );
    const outcome = sent.ok ? (sent.result.events[0]?.data as { escalated?: boolean } | undefined) : undefined;
    if (outcome?.escalated) this.#notify(d.policy.owner, 'escalated', d.decisionId, d.signal);
  }

  /** A category's sensors all reported ok in this pass (the ones emitting a signal kind bound to it). */
  #sensorOk(category: string, reports: ReadonlyMap<string, boolean>): boolean {
    const kinds = new Set(this.options.bindings.filter((b) => b.category === category).map((b) => b.signal));
    const sensors = this.options.sensors.filter((s) => s.emits.some((k) => kinds.has(k)));
    return sensors.length > 0 && sensors.every((s) => reports.get(s.name) === true);
  }

  #notify(owner: string, kind: string, decisionId: string, signal: Signal): void {
    this.nc.publish(Subjects.notify(owner), JSON.stringify({ kind, owner, decisionId, signal: { kind: signal.kind, key: signal.key, detail: signal.detail } }));
  }

  async #readSignals(marker: PassMarker): Promise<Signal[]> {
    if (marker.signalCount === 0) return [];
    const consumer = await jetstream(this.nc).consumers.get(Streams.signals.name, {
      filter_subjects: Subjects.passSignals(marker.passId),
      deliver_policy: DeliverPolicy.All,
    });
    const out: Signal[] = [];
    const messages = await consumer.consume({ max_messages: 1_000 });
    try {
      for await (const m of withinReplayDeadline(messages, `signals of pass ${marker.passId}`)) {
        const parsed = PublishedSignal.safeParse(m.json());
        if (parsed.success && parsed.data.passId === marker.passId) out.push(parsed.data.signal);
        if (out.length >= marker.signalCount || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
    return out;
  }

  /** Every decision the log holds (one subject each): the sweep and the outcome checks cover them all. */
  async #decisionIds(): Promise<string[]> {
    const jsm = await jetstreamManager(this.nc);
    const info = await jsm.streams.info(Streams.events.name, { subjects_filter: Subjects.aggregateEvents('autonomy', 'decision', '*') });
    return Object.keys(info.state.subjects ?? {}).map((s) => s.split('.').at(-1)!);
  }

  async #each(ids: readonly string[], f: (id: string) => Promise<void>): Promise<void> {
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) await f(id);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  }

  async #send(name: string, payload: unknown, commandId: string): Promise<Sent> {
    for (let attempt = 0; ; attempt++) {
      try {
        return { ok: true, result: await sendCommand(this.nc, name, payload, { commandId, causationId: commandId }) };
      } catch (err) {
        const code = err instanceof PlatformError ? err.code : 'INTERNAL';
        const retryable = code === 'UNAVAILABLE' || code === 'CONCURRENCY_CONFLICT';
        if (!retryable || attempt >= 4 || this.#stopped) return { ok: false, code, message: err instanceof Error ? err.message : String(err) };
        await sleep(100 * 2 ** attempt);
      }
    }
  }
}
