import { jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Streams } from '../../schemas/subjects.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { ensureCommandDurable } from '../../services/platform/nats/commandDurable.ts';
import type { ExecutionContext, RunOutcome } from './commandRunner.ts';

export interface CommandConsumerOptions {
  durable: string;
  filterSubject: string;
  /** How long JetStream waits for an ack before redelivering; long work heartbeats at a third of it. */
  ackWaitMs: number;
  /**
   * `all` (default): a durable that outlives restarts, as a site agent's does. `new`: only commands published after
   * the consumer exists, for an agent whose identity lives for one boot.
   */
  deliver?: 'all' | 'new';
  /**
   * The control plane made the durable (the agent joined with a token): only look it up. Under broker permissions an
   * agent may not create or change consumers; heartbeats then follow the durable's own ack wait.
   */
  durableExists?: boolean;
  /** Commands with the same key run one after another (one machine's commands stay ordered). */
  serialiseBy: (msg: JsMsg) => string;
  handle: (data: Uint8Array, ctx: ExecutionContext) => Promise<RunOutcome>;
  log: Logger;
}

export interface RunningConsumer {
  /** Stops fetching, aborts running executors, waits for them (bounded), leaves unfinished messages unacked. */
  stop(): Promise<void>;
  /** Resolves once nothing is in flight (tests and graceful shutdown). */
  idle(): Promise<void>;
}

/**
 * A durable pull consumer on BC_AGENT_COMMANDS with explicit acks. A message is acked only after its result is
 * published (or decided without running); publishing failures nak it for a retry, which the journal answers.
 */
export async function startCommandConsumer(nc: NatsConnection, options: CommandConsumerOptions): Promise<RunningConsumer> {
  const stream = Streams.agentCommands.name;
  // An agent that registered itself (no join token) makes or adjusts its own durable, as before broker permissions.
  if (!options.durableExists) {
    await ensureCommandDurable(await jetstreamManager(nc), {
      durable: options.durable,
      filterSubject: options.filterSubject,
      deliver: options.deliver ?? 'all',
      ackWaitMs: options.ackWaitMs,
    });
  }
  const consumer = await jetstream(nc).consumers.get(stream, options.durable);
  const ackWaitNs = options.durableExists ? (await consumer.info(true)).config.ack_wait : undefined;
  const ackWaitMs = ackWaitNs ? Math.round(ackWaitNs / 1_000_000) : options.ackWaitMs;
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 64 });
  const abort = new AbortController();
  const chains = new Map<string, Promise<void>>();
  const inFlight = new Set<Promise<void>>();

  const handleMessage = async (msg: JsMsg): Promise<void> => {
    if (abort.signal.aborted) return;
    try {
      const outcome = await options.handle(msg.data, { heartbeat: () => msg.working(), signal: abort.signal });
      if (outcome !== 'aborted') msg.ack();
    } catch (err) {
      options.log.error({ err, subject: msg.subject }, 'agent command handling failed; will be redelivered');
      if (!abort.signal.aborted) msg.nak(2_000);
    }
  };

  const loop = (async () => {
    for await (const msg of messages) {
      // Heartbeats start on receipt: a command queued behind a long one for the same machine must not be
      // redelivered just for waiting its turn.
      const heartbeat = setInterval(() => msg.working(), Math.max(250, ackWaitMs / 3));
      const key = options.serialiseBy(msg);
      const run = (chains.get(key) ?? Promise.resolve()).then(() => handleMessage(msg));
      chains.set(key, run);
      inFlight.add(run);
      void run.finally(() => {
        clearInterval(heartbeat);
        inFlight.delete(run);
        if (chains.get(key) === run) chains.delete(key);
      });
    }
    if (!abort.signal.aborted) options.log.error({ durable: options.durable }, 'agent command consumer ended unexpectedly');
  })();

  const idle = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  return {
    idle,
    stop: async () => {
      abort.abort();
      await messages.close().catch(() => undefined);
      await loop.catch(() => undefined);
      await Promise.race([idle(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    },
  };
}
