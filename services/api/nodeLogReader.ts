import { DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { NodeLogLine, NodeLogSource, type NodeLogEntry } from '../../schemas/agent/nodeLog.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';

/** Whose log is read, and from when on a tenant may see it (the broker's clock: when it took the node on). */
export interface NodeLogScope {
  siteId: string;
  nodeId: string;
  /** Lines stored before this instant are left out (a tenant does not read its node's earlier owners' work). */
  visibleFrom?: Date;
}

/** The largest page of lines one request returns. */
export const NODE_LOG_PAGE_MAX = 1_000;

const READ_GIVE_UP_MS = 10_000;

/**
 * A stored message as a log entry, or undefined when it is not one to show. The subject is the broker-checked
 * identity (an agent may publish only on its own site's or node's subjects, `permissions.ts`), so a body that claims
 * another node or source than its subject, or does not parse, is dropped, never shown as someone else's.
 */
export function entryOf(scope: NodeLogScope, msg: Pick<JsMsg, 'subject' | 'seq' | 'data'> & { time: Date }): NodeLogEntry | undefined {
  if (scope.visibleFrom && msg.time < scope.visibleFrom) return undefined;
  const source = NodeLogSource.safeParse(msg.subject.split('.').at(-1));
  if (!source.success || msg.subject !== Subjects.nodeLog(scope.siteId, scope.nodeId, source.data)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(msg.data).toString('utf8'));
  } catch {
    return undefined;
  }
  const line = NodeLogLine.safeParse(body);
  if (!line.success || line.data.nodeId !== scope.nodeId || line.data.source !== source.data) return undefined;
  return { ...line.data, seq: msg.seq, storedAt: msg.time.toISOString() };
}

/** The sequence of the node's newest line (any source), 0 when it has none. */
export async function lastNodeLogSeq(jsm: JetStreamManager, scope: NodeLogScope): Promise<number> {
  const lasts = await Promise.all(
    NodeLogSource.options.map((source) =>
      jsm.direct.getMessage(Streams.logs.name, { last_by_subj: Subjects.nodeLog(scope.siteId, scope.nodeId, source) }).catch(() => null),
    ),
  );
  return Math.max(0, ...lasts.map((m) => m?.seq ?? 0));
}

/**
 * One node's lines after `afterSeq` (at most `limit`, oldest first); with `afterSeq` undefined, its newest `limit`
 * lines. Reads stop at the node's newest line as it was when the read began, so a page never waits for more.
 */
export async function readNodeLogs(
  js: JetStreamClient,
  jsm: JetStreamManager,
  scope: NodeLogScope,
  afterSeq: number | undefined,
  limit: number,
): Promise<{ items: NodeLogEntry[]; lastSeq: number }> {
  const through = await lastNodeLogSeq(jsm, scope);
  const from = afterSeq ?? 0;
  if (through <= from) return { items: [], lastSeq: from };
  const consumer = await js.consumers.get(Streams.logs.name, {
    filter_subjects: Subjects.nodeLogs(scope.siteId, scope.nodeId),
    deliver_policy: from > 0 ? DeliverPolicy.StartSequence : DeliverPolicy.All,
    ...(from > 0 ? { opt_start_seq: from + 1 } : {}),
  });
  const items: NodeLogEntry[] = [];
  let lastSeq = from;
  const messages = await consumer.consume({ max_messages: 256 });
  // Lines the stream dropped (age, limits) since `through` was read would leave nothing to wait for: give up then.
  const giveUp = setTimeout(() => void messages.close(), READ_GIVE_UP_MS);
  try {
    for await (const msg of messages) {
      lastSeq = msg.seq;
      const entry = entryOf(scope, { subject: msg.subject, seq: msg.seq, data: msg.data, time: msg.time });
      if (entry) items.push(entry);
      // Forward pages stop at `limit`; the newest page keeps the last `limit` seen.
      if (afterSeq !== undefined && items.length >= limit) break;
      if (afterSeq === undefined && items.length > limit) items.shift();
      if (msg.seq >= through || msg.info.pending === 0) break;
    }
  } finally {
    clearTimeout(giveUp);
    await messages.close();
  }
  return { items, lastSeq: afterSeq === undefined ? through : lastSeq };
}
