import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CONTROLS_ID } from '../../../schemas/autonomy/ids.ts';
import { PassMarker, PublishedSignal, type Signal } from '../../../schemas/autonomy/signals.ts';
import { AUTONOMY_ENGINE_DURABLE, Streams, Subjects } from '../../../schemas/subjects.ts';
import { checkBindings } from '../../autonomy/bindings.ts';
import { controlsAggregate } from '../../autonomy/controls/controls.ts';
import { decisionAggregate } from '../../autonomy/decision/decision.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import { withinReplayDeadline } from '../../platform/nats/replayDeadline.ts';
import type { Effect, MessageSource, ProcessManager } from '../../platform/processManager/processManager.ts';
import { ProcessManagerHost } from '../../platform/processManager/processManagerHost.ts';
import { autonomyEngineModel, decideAutonomyEngine, evolveAutonomyEngine, type AutonomyEngineModel } from './passDecisions.ts';
import type { AutonomyEngineSettings, EngineObservation, EngineTask, StartView } from './passInputs.ts';
import { remediationCommands } from './remediations.ts';

export interface AutonomyEngineOptions extends AutonomyEngineSettings {
  /** Fault injection for tests: called on the budget path before budget is taken; a throw must fail closed. */
  budgetFault?: () => void;
}

/** Pass markers, from `BC_SIGNALS`: a marker that does not parse is set aside (dead-lettered), never decided on. */
const passMarkers: MessageSource<PassMarker> = {
  stream: Streams.signals.name,
  // Passes published before the engine's first start are history, not work.
  deliver: 'new',
  read(data) {
    let parsed;
    try {
      parsed = PassMarker.safeParse(JSON.parse(new TextDecoder().decode(data)));
    } catch {
      return { rejection: { reason: 'UNDECODABLE', detail: 'a pass marker that is not JSON' } };
    }
    return parsed.success ? { events: [parsed.data] } : { rejection: { reason: 'UNDECODABLE', detail: 'not a pass marker' } };
  },
};

/**
 * `autonomy-engine`: a process manager (`passDecisions.ts`, `actOnDecision.ts`) on the one `ProcessManagerHost`, its
 * durable over the pass markers `fleet-sensors` publishes to `BC_SIGNALS` (shared by replicas). A pass is read (its
 * signals, the decisions the log holds), then each decision on its own key: the expiry sweep and the opening, then
 * its start or judgement. Every command has an id derived from decision, episode and step, so two replicas, a
 * redelivered pass or a restart after `kill -9` send the same commands and the log keeps one of each.
 */
export class AutonomyEngine {
  readonly repository: AggregateRepository;
  readonly #host: ProcessManagerHost<never, AutonomyEngineModel, EngineTask, EngineObservation, PassMarker>;

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
    const engine: ProcessManager<never, AutonomyEngineModel, EngineTask, EngineObservation, PassMarker> = {
      durable: AUTONOMY_ENGINE_DURABLE,
      filter: Subjects.allPassMarkers,
      source: passMarkers,
      ackWaitMs: 120_000,
      maxInFlight: 4,
      // Decisions acted on at once (a pass's reaction waits for its decisions' and holds one slot).
      maxReactions: 32,
      model: autonomyEngineModel(options),
      evolve: evolveAutonomyEngine,
      decide: (input, model) => {
        if (input.type === 'observed' && input.observation.type === 'pass') this.logUnbound(input.observation.signals, model);
        return decideAutonomyEngine(input, model);
      },
      perform: (task, _model, signal) => this.read(task, signal),
    };
    this.#host = new ProcessManagerHost(nc, store, engine, log);
  }

  async start(): Promise<void> {
    await this.#host.start();
  }

  async stop(): Promise<void> {
    await this.#host.stop();
  }

  /** The reads a pass needs, answered as what was read: the decisions are taken on it. */
  private async read(task: EngineTask, signal: AbortSignal): Promise<readonly Effect<EngineTask, EngineObservation>[]> {
    let observation: EngineObservation;
    if (task.type === 'readPass') {
      const [signals, decisionIds] = await Promise.all([this.readSignals(task.marker), this.decisionIds()]);
      observation = { type: 'pass', marker: task.marker, signals, decisionIds };
    } else {
      const { state } = await this.repository.load(decisionAggregate, task.decisionId);
      const { decisionId, pass } = task;
      const now = Date.now();
      if (task.stage === 'before') observation = { type: 'before', decisionId, pass, state, now };
      else {
        const start = state.exists && state.status === 'approved' ? await this.startView(state) : undefined;
        observation = { type: 'after', decisionId, pass, state, now, ...(start ? { start } : {}) };
      }
    }
    signal.throwIfAborted();
    return [{ kind: 'observe', observation }];
  }

  private async startView(state: Parameters<typeof remediationCommands>[0]): Promise<StartView> {
    const controls = (await this.repository.load(controlsAggregate, CONTROLS_ID)).state;
    const remediation = await remediationCommands(state, this.repository);
    if (state.approvedBy !== 'policy') return { controls, remediation };
    try {
      this.options.budgetFault?.();
      return { controls, remediation };
    } catch (err) {
      return { controls, remediation, budgetFault: err instanceof Error ? err.message : String(err) };
    }
  }

  private logUnbound(signals: readonly Signal[], model: AutonomyEngineModel): void {
    for (const s of signals) {
      const binding = model.bindings.get(s.kind);
      if (!binding || !model.settings.policies.has(binding.category))
        this.log.warn({ kind: s.kind, key: s.key }, 'signal with no binding to a declared category: NOT_PERMITTED');
    }
  }

  private async readSignals(marker: PassMarker): Promise<Signal[]> {
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
  private async decisionIds(): Promise<string[]> {
    const jsm = await jetstreamManager(this.nc);
    const info = await jsm.streams.info(Streams.events.name, { subjects_filter: Subjects.aggregateEvents('autonomy', 'decision', '*') });
    return Object.keys(info.state.subjects ?? {}).map((s) => s.split('.').at(-1)!);
  }
}
