import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventBatch, type EventMetadata } from '../../schemas/envelope.ts';
import { eventCatalog, type PlatformEvent } from '../../schemas/events.ts';
import { stepAttemptId, type WorkMessage } from '../../schemas/metal/workflow.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { Logger } from '../platform/logger.ts';
import { sendEngineCommand } from './commandSender.ts';
import type { WorkflowConfig } from './config.ts';
import { FleetModel } from './fleetModel.ts';

export const ORCHESTRATOR_DURABLE = 'workflow_orchestrator';
/** Events are handled one at a time (max_ack_pending 1, so in log order); a crashed handler's event returns after this. */
const ACK_WAIT_MS = 15_000;

/** A command id derived from what it answers, so a redelivered event re-sends the same command (a no-op). */
const idFor = (prefix: string, key: string) => `${prefix}-${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;

/**
 * `workflow-orchestrator`, the process manager of node lifecycles: enrolled nodes are inspected; requested
 * operations start workflows within the per-site caps; scheduled steps become work messages; finished workflows
 * complete or fail their node. One durable consumer on `bc.evt.>` processed in order; on start the model is folded
 * back from the log up to the consumer's ack floor, and every reaction is idempotent by its deterministic id.
 */
export class WorkflowOrchestrator {
  readonly model = new FleetModel();
  readonly #abort = new AbortController();
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly store: EventStore,
    private readonly config: WorkflowConfig,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const jsm = this.store.jsm;
    let info = await jsm.consumers.info(Streams.events.name, ORCHESTRATOR_DURABLE).catch(() => undefined);
    if (!info) {
      info = await jsm.consumers.add(Streams.events.name, {
        durable_name: ORCHESTRATOR_DURABLE,
        filter_subject: Subjects.allEvents,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_MS * 1_000_000,
        max_ack_pending: 1,
      });
    }
    await this.foldUpTo(info.ack_floor.stream_seq);
    const consumer = await this.store.js.consumers.get(Streams.events.name, ORCHESTRATOR_DURABLE);
    this.#messages = await consumer.consume({ max_messages: 256 });
    const messages = this.#messages;
    this.#loop = (async () => {
      await this.admit();
      for await (const msg of messages) {
        const heartbeat = setInterval(() => msg.working(), ACK_WAIT_MS / 3);
        try {
          await this.handle(msg);
          msg.ack();
        } catch (err) {
          // On a clean stop the event goes straight back, so the next orchestrator need not wait out the ack wait.
          if (this.#abort.signal.aborted) return msg.nak();
          this.log.error({ err, seq: msg.seq }, 'orchestrator could not handle an event');
          msg.nak(1_000);
        } finally {
          clearInterval(heartbeat);
        }
      }
    })().catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.log.error({ err }, 'orchestrator loop ended');
    });
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
  }

  /** Rebuilds the model from events this orchestrator already handled, without reacting to them again. */
  private async foldUpTo(seq: number): Promise<void> {
    if (seq === 0) return;
    const consumer = await this.store.js.consumers.get(Streams.events.name, { filter_subjects: Subjects.allEvents, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume({ max_messages: 5_000 });
    try {
      for await (const m of messages) {
        if (m.seq <= seq) for (const { event } of this.decode(m)) this.model.apply(event);
        if (m.seq >= seq || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
  }

  private decode(msg: JsMsg): { event: PlatformEvent; metadata: EventMetadata }[] {
    return EventBatch.parse(msg.json()).events.filter((e) => eventCatalog.has(e.type)).map((e) => ({ event: eventCatalog.read(e), metadata: e.metadata }));
  }

  private async handle(msg: JsMsg): Promise<void> {
    for (const { event } of this.decode(msg)) {
      this.model.apply(event);
      await this.react(event);
    }
    await this.admit();
  }

  private send(name: string, payload: unknown, commandId: string) {
    return sendEngineCommand(this.nc, this.log, this.#abort.signal, name, payload, commandId);
  }

  private async react(event: PlatformEvent): Promise<void> {
    switch (event.type) {
      case 'NodeEnrolled':
        await this.send('metal.startInspection', { nodeId: event.data.nodeId }, idFor('inspect', event.data.nodeId));
        return;
      case 'StepScheduled': {
        const { workflowId, stepIndex, stepId, attempt } = event.data;
        const work: WorkMessage = { workflowId, stepIndex, attempt };
        await jetstream(this.nc).publish(Subjects.work('control-plane', stepId), JSON.stringify(work), { msgID: stepAttemptId(workflowId, stepIndex, attempt) });
        const wf = this.model.workflows.get(workflowId);
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

  private async admit(): Promise<void> {
    for (const op of this.model.admit({ deploys: this.config.maxDeploysPerSite, wipes: this.config.maxWipesPerSite })) {
      const { workflowId, nodeId, siteId, operation, inputs } = op;
      await this.send('workflow.start', { workflowId, nodeId, siteId, operation, inputs }, `${workflowId}-start`);
    }
  }
}
