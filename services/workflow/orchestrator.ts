import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { eventCatalog, type PlatformEvent } from '../../schemas/events.ts';
import { stepAttemptId, type WorkMessage } from '../../schemas/metal/workflow.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { DeadLetterQueue } from '../platform/deadLetters/deadLetterQueue.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import { knownEvents } from '../platform/eventStore/knownEvents.ts';
import type { PlatformError } from '../platform/errors.ts';
import type { LeaseTerm } from '../platform/lease/leaderLease.ts';
import type { Logger } from '../platform/logger.ts';
import { KeyedMutex } from '../platform/commands/keyedMutex.ts';
import { sendEngineCommand } from './commandSender.ts';
import type { WorkflowConfig } from './config.ts';
import { FleetModel } from './fleetModel.ts';
import { idFor } from '../../schemas/ids.ts';

export const ORCHESTRATOR_DURABLE = 'workflow_orchestrator';
/** A crashed orchestrator's unacked events return after this. */
const ACK_WAIT_MS = 15_000;
/** Events whose reactions may be under way at once (the consumer's max_ack_pending). */
const MAX_IN_FLIGHT = 512;

/** A command id derived from what it answers, so a redelivered event re-sends the same command (a no-op). */

/**
 * `workflow-orchestrator`, the process manager of node lifecycles: enrolled nodes are inspected; requested
 * operations start workflows within the per-site caps; scheduled steps become work messages; finished workflows
 * complete or fail their node. One durable consumer on `bc.evt.>` processed in order; on start the model is folded
 * back from the log up to the consumer's ack floor, and every reaction is idempotent by its deterministic id. A
 * message the event store did not write, or cannot be read, is dead-lettered and acked without folding or reacting.
 */
export class WorkflowOrchestrator {
  readonly model = new FleetModel();
  readonly #abort = new AbortController();
  #fail: (err: Error) => void = () => undefined;
  /** Resolves if the event loop ends without a stop: the process must then exit so its supervisor restarts it. */
  readonly failure = new Promise<Error>((resolve) => (this.#fail = resolve));
  readonly #deadLetters: DeadLetterQueue;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  /** Highest stream sequence folded into the model: a redelivered event reacts again but is not applied twice. */
  #appliedSeq = 0;
  readonly #reactions = new KeyedMutex();

  get #stamp() {
    return this.lease ? { lease: this.lease } : {};
  }

  constructor(
    private readonly nc: NatsConnection,
    private readonly store: EventStore,
    private readonly config: WorkflowConfig,
    private readonly log: Logger,
    /** The leader lease this orchestrator runs under (stamped on its commands); none in tests that run it alone. */
    private readonly lease?: LeaseTerm,
  ) {
    this.#deadLetters = new DeadLetterQueue(nc, ORCHESTRATOR_DURABLE, log);
  }

  async start(): Promise<void> {
    const jsm = this.store.jsm;
    const config = { ack_wait: ACK_WAIT_MS * 1_000_000, max_ack_pending: MAX_IN_FLIGHT };
    let info = await jsm.consumers.info(Streams.events.name, ORCHESTRATOR_DURABLE).catch(() => undefined);
    if (!info) {
      info = await jsm.consumers.add(Streams.events.name, {
        durable_name: ORCHESTRATOR_DURABLE,
        filter_subject: Subjects.allEvents,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...config,
      });
    } else if (info.config.max_ack_pending !== config.max_ack_pending || info.config.ack_wait !== config.ack_wait) {
      info = await jsm.consumers.update(Streams.events.name, ORCHESTRATOR_DURABLE, config);
    }
    // Everything delivered before is folded in; what was delivered but not acked comes back and only reacts.
    await this.foldUpTo(info.delivered.stream_seq);
    const consumer = await this.store.js.consumers.get(Streams.events.name, ORCHESTRATOR_DURABLE);
    // A durable deleted under us ends the loop (the process restarts and recreates it) instead of waiting forever.
    this.#messages = await consumer.consume({ max_messages: MAX_IN_FLIGHT, abort_on_missing_resource: true });
    const messages = this.#messages;
    this.#loop = (async () => {
      this.admit();
      for await (const msg of messages) this.receive(msg);
      await this.#reactions.idle();
      throw new Error('the event consumer ended');
    })().catch((err: unknown) => {
      if (this.#abort.signal.aborted) return;
      this.log.error({ err }, 'orchestrator loop ended');
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    });
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
  }

  /**
   * Folds the event into the model at once (events arrive in log order, so the model and admission see the log's
   * order), then queues its reactions behind earlier ones of the same aggregate: reactions of different workflows
   * run concurrently, those of one workflow or node stay in order. The event is acked when its reactions are done.
   */
  private receive(msg: JsMsg): void {
    const read = knownEvents(this.store.decode(msg), eventCatalog);
    if (read.rejection) {
      this.#appliedSeq = Math.max(this.#appliedSeq, msg.seq);
      this.#deadLetters.setAside(msg, read.rejection);
      return;
    }
    const events = read.events;
    if (msg.seq > this.#appliedSeq) {
      for (const { event } of events) this.model.apply(event);
      this.#appliedSeq = msg.seq;
    }
    const heartbeat = setInterval(() => msg.working(), ACK_WAIT_MS / 3);
    void this.#reactions
      .run(msg.subject, async () => {
        for (const { event } of events) await this.react(event);
      })
      .then(
        () => msg.ack(),
        (err: unknown) => {
          // On a clean stop the event goes straight back, so the next orchestrator need not wait out the ack wait.
          if (this.#abort.signal.aborted) return msg.nak();
          this.log.error({ err, seq: msg.seq }, 'orchestrator could not react to an event');
          msg.nak(1_000);
        },
      )
      .finally(() => clearInterval(heartbeat));
    this.admit();
  }

  /** Rebuilds the model from events this orchestrator already received, without reacting to them again. */
  private async foldUpTo(seq: number): Promise<void> {
    if (seq === 0) return;
    const consumer = await this.store.js.consumers.get(Streams.events.name, { filter_subjects: Subjects.allEvents, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume({ max_messages: 5_000 });
    try {
      for await (const m of messages) {
        if (m.seq <= seq) for (const { event } of knownEvents(this.store.decode(m), eventCatalog).events ?? []) this.model.apply(event);
        this.#appliedSeq = Math.min(m.seq, seq);
        if (m.seq >= seq || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
  }

  private send(name: string, payload: unknown, commandId: string) {
    return sendEngineCommand(this.nc, this.log, this.#abort.signal, name, payload, commandId, this.#stamp);
  }

  private async react(event: PlatformEvent): Promise<void> {
    switch (event.type) {
      case 'NodeEnrolled':
        await this.send('metal.startInspection', { nodeId: event.data.nodeId }, idFor('inspect', event.data.nodeId));
        return;
      case 'StepScheduled': {
        const { workflowId, stepIndex, stepId, attempt } = event.data;
        const work: WorkMessage = { workflowId, stepIndex, attempt };
        const wf = this.model.workflows.get(workflowId);
        // A plugin's step waits on the plugin's own work subject until one of its replicas takes it.
        const plugin = wf?.steps[stepIndex]?.plugin;
        const subject = plugin ? Subjects.pluginWork(plugin, stepId) : Subjects.work('control-plane', stepId);
        await jetstream(this.nc).publish(subject, JSON.stringify(work), { msgID: stepAttemptId(workflowId, stepIndex, attempt) });
        if (stepId === 'disk.wipe' && wf) await this.send('metal.markWiping', { nodeId: wf.nodeId, workflowId }, `${workflowId}-wiping`);
        return;
      }
      case 'WorkflowCompleted': {
        const { workflowId } = event.data;
        const wf = this.model.workflows.get(workflowId);
        if (!wf) return;
        const inventoryAt = wf.steps.findIndex((s) => s.id === 'inventory.read');
        if (wf.operation === 'inspect' && inventoryAt >= 0) {
          await this.send('metal.recordInventory', { nodeId: wf.nodeId, workflowId, inventory: wf.outputs[inventoryAt] }, `${workflowId}-inventory`);
        }
        await this.send('metal.completeOperation', { nodeId: wf.nodeId, workflowId }, `${workflowId}-done`);
        this.model.forget(workflowId);
        return;
      }
      case 'NodeCancelRequested': {
        const { workflowId, nodeId, reason } = event.data;
        await this.send('workflow.cancel', { workflowId, nodeId, reason }, `${workflowId}-cancel`);
        return;
      }
      case 'WorkflowCancelled': {
        const { workflowId, nodeId } = event.data;
        await this.send('metal.completeCancel', { nodeId, workflowId }, `${workflowId}-cancelled`);
        this.model.forget(workflowId);
        return;
      }
      case 'WorkflowFailed': {
        const { workflowId, reason, failedStep } = event.data;
        const wf = this.model.workflows.get(workflowId);
        if (!wf) return;
        await this.send('metal.failOperation', { nodeId: wf.nodeId, workflowId, reason: reason.slice(0, 1000), failedStep }, `${workflowId}-failed`);
        this.model.forget(workflowId);
        return;
      }
      default:
        return;
    }
  }

  /** Starts what the caps allow now; each start is its own reaction, in order behind its workflow's others. */
  private admit(): void {
    for (const op of this.model.admit({ deploys: this.config.maxDeploysPerSite, wipes: this.config.maxWipesPerSite })) {
      const { workflowId, nodeId, siteId, operation, inputs } = op;
      let refusal: PlatformError | undefined;
      const start = async () => {
        await sendEngineCommand(
          this.nc,
          this.log,
          this.#abort.signal,
          'workflow.start',
          { workflowId, nodeId, siteId, operation, inputs },
          `${workflowId}-start`,
          { ...this.#stamp, onRefused: (err) => (refusal = err) },
        );
        // A profile that is unknown or invalid now: the operation fails with the reason instead of waiting forever.
        if (refusal?.code === 'PRECONDITION_FAILED') {
          await this.send('metal.failOperation', { nodeId, workflowId, reason: refusal.message.slice(0, 1000), failedStep: null }, `${workflowId}-refused`);
        }
      };
      void this.#reactions.run(workflowId, start).catch((err: unknown) => {
        // Only a stop ends the retrying send; the restarted orchestrator folds the queue back and admits it again.
        if (!this.#abort.signal.aborted) this.log.error({ err, workflowId }, 'could not start an admitted workflow');
      });
    }
  }
}
