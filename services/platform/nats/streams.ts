import { jetstreamManager, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { Buckets, Streams } from '../../../schemas/subjects.ts';
import { AGENT_RESULTS_MAX_BYTES_DEFAULT, LOGS_MAX_AGE_MS_DEFAULT, LOGS_MAX_BYTES_DEFAULT, LOGS_MAX_LINES_PER_SOURCE_DEFAULT, type Config } from '../config.ts';

type DeclaredStream = Pick<
  StreamConfig,
  | 'name'
  | 'subjects'
  | 'storage'
  | 'num_replicas'
  | 'duplicate_window'
  | 'allow_direct'
  | 'retention'
  | 'discard'
  | 'max_msgs'
  | 'max_bytes'
  | 'max_age'
  | 'max_msgs_per_subject'
  | 'max_msg_size'
>;

const ms = (n: number) => n * 1_000_000;

/** Dead letters kept at most (oldest dropped first). */
export const DEAD_LETTERS_KEPT = 100_000;

/** The largest agent result stored: nats-server's default `max_payload`, which a site's relayed HTTP answer may reach. */
export const AGENT_RESULT_MAX_MSG_BYTES = 1 << 20;

/** The largest node log line stored: a `NodeLogLine` of `NODE_LOG_TEXT_MAX` characters, each up to 3 UTF-8 bytes, and its fields. */
export const NODE_LOG_MAX_MSG_BYTES = 8 << 10;

/** What sizes the declared streams: replicas, the duplicate window and the agent results' bound from configuration. */
export type StreamSettings = Pick<Config, 'streamReplicas' | 'duplicateWindowMs'> &
  Partial<Pick<Config, 'agentResultsMaxBytes' | 'logsMaxAgeMs' | 'logsMaxLinesPerSource' | 'logsMaxBytes'>>;

/** The streams the platform declares, with replicas and the duplicate window from configuration. */
export function declaredStreams(config: StreamSettings): DeclaredStream[] {
  const common = {
    storage: 'file' as StreamConfig['storage'],
    num_replicas: config.streamReplicas,
    duplicate_window: ms(config.duplicateWindowMs),
    allow_direct: true,
    discard: 'old' as StreamConfig['discard'],
    max_msgs: -1,
    max_bytes: -1,
    max_msgs_per_subject: -1,
    max_msg_size: -1,
  };
  return [
    { ...common, name: Streams.events.name, subjects: [...Streams.events.subjects], retention: 'limits', max_age: 0 },
    {
      ...common,
      name: Streams.agentCommands.name,
      subjects: [...Streams.agentCommands.subjects],
      retention: 'limits',
      max_age: ms(7 * 24 * 3600_000),
    },
    // Only the result intake publishes here (`services/agents/resultIntake.ts`), and only answers to commands sent, one
    // per signer; agents, an installed host's node agent (its tenant) among them, still choose what an answer holds, so
    // the stream is bounded besides. No per-subject limit: the oldest message of a subject would go first.
    {
      ...common,
      name: Streams.agentResults.name,
      subjects: [...Streams.agentResults.subjects],
      retention: 'limits',
      max_age: ms(30 * 24 * 3600_000),
      max_bytes: config.agentResultsMaxBytes ?? AGENT_RESULTS_MAX_BYTES_DEFAULT,
      max_msg_size: AGENT_RESULT_MAX_MSG_BYTES,
    },
    { ...common, name: Streams.work.name, subjects: [...Streams.work.subjects], retention: 'workqueue', max_age: 0 },
    // One entry per consumer and position (a consumer that quarantines the same message again replaces its entry),
    // bounded so a flood of forged messages cannot fill the disk.
    {
      ...common,
      name: Streams.deadLetters.name,
      subjects: [...Streams.deadLetters.subjects],
      retention: 'limits',
      max_age: ms(30 * 24 * 3600_000),
      max_msgs: DEAD_LETTERS_KEPT,
      max_msgs_per_subject: 1,
    },
    // Signals are not events: a steady fleet's passes append nothing to BC_EVENTS. Every subject is unique per pass or
    // per observed node, so one message per subject keeps only the latest observation of each node.
    {
      ...common,
      name: Streams.signals.name,
      subjects: [...Streams.signals.subjects],
      retention: 'limits',
      max_age: ms(24 * 3600_000),
      max_msgs_per_subject: 1,
    },
    // Agents publish here directly (core publish, no ack), each on its own subjects only (broker permissions), and
    // choose what they print: one subject per node and source, so a chatty source drops its own oldest lines first.
    {
      ...common,
      name: Streams.logs.name,
      subjects: [...Streams.logs.subjects],
      retention: 'limits',
      max_age: ms(config.logsMaxAgeMs ?? LOGS_MAX_AGE_MS_DEFAULT),
      max_bytes: config.logsMaxBytes ?? LOGS_MAX_BYTES_DEFAULT,
      max_msgs_per_subject: config.logsMaxLinesPerSource ?? LOGS_MAX_LINES_PER_SOURCE_DEFAULT,
      max_msg_size: NODE_LOG_MAX_MSG_BYTES,
    },
  ];
}

/**
 * Waits until JetStream answers for this account. A cluster that just started (or lost its meta leader with a node)
 * answers "temporarily unavailable" until its nodes elect one; a single server answers at once.
 */
export async function waitForJetStream(nc: NatsConnection, timeoutMs = 60_000): Promise<JetStreamManager> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      await jsm.getAccountInfo();
      return jsm;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

/**
 * Runs a stream or bucket creation, retrying while a forming cluster cannot place its replicas yet ("no suitable
 * peers for placement", 10005): the meta leader is elected before every peer has reported in.
 */
async function whenPlaceable<T>(create: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await create();
    } catch (err) {
      const unplaceable = (err as { code?: number }).code === 10005 || /no suitable peers/i.test(String(err));
      if (!unplaceable || Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

/** Creates missing streams and brings existing ones to the declared config; safe to run on every start. */
export async function ensureStreams(nc: NatsConnection, config: StreamSettings): Promise<JetStreamManager> {
  await waitForJetStream(nc);
  const jsm = await jetstreamManager(nc);
  for (const stream of declaredStreams(config)) {
    const existing = await jsm.streams.info(stream.name).catch((err: { code?: number; message?: string }) => {
      if (err.code === 10059 || /not found/i.test(err.message ?? '')) return undefined;
      throw err;
    });
    if (!existing) {
      await whenPlaceable(() => jsm.streams.add(stream));
      continue;
    }
    const { name, storage: _storage, retention: _retention, ...mutable } = stream;
    const drifted = Object.entries(mutable).some(
      ([key, value]) => JSON.stringify((existing.config as unknown as Record<string, unknown>)[key]) !== JSON.stringify(value),
    );
    if (drifted) await jsm.streams.update(name, mutable);
  }
  await ensureBuckets(nc, jsm, config.streamReplicas);
  return jsm;
}

/** The stream behind a declared bucket. */
export const bucketStream = (bucket: { kind: 'kv' | 'object'; name: string }) => `${bucket.kind === 'kv' ? 'KV' : 'OBJ'}_${bucket.name}`;

/**
 * Creates the platform's KV bucket and object store if missing, and brings their replicas to `replicas` (the client
 * libraries only set replicas when they create a bucket). The lease bucket keeps one value per key and has no direct
 * gets: a lease read goes to the stream leader, never to a replica that may lag behind a takeover.
 */
async function ensureBuckets(nc: NatsConnection, jsm: JetStreamManager, replicas: number): Promise<void> {
  await whenPlaceable(() => new Objm(nc).create(Buckets.blobs.name, { storage: StorageType.File, replicas }));
  await whenPlaceable(() => new Kvm(nc).create(Buckets.leases.name, { storage: StorageType.File, replicas, history: 1, allow_direct: false }));
  for (const bucket of Object.values(Buckets)) {
    const name = bucketStream(bucket);
    const info = await jsm.streams.info(name);
    if (info.config.num_replicas !== replicas) await jsm.streams.update(name, { num_replicas: replicas });
  }
}
