import type { JsMsg, StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { eventCatalog } from '../../schemas/events.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import { knownEvents } from '../platform/eventStore/knownEvents.ts';
import type { Logger } from '../platform/logger.ts';
import { joinKey, type AgentJoin } from './agentGateway.ts';
import { StreamWatch } from './streamWatch.ts';

/** How far back the join watch indexes registrations: longer than any attempt of `wait.agentJoined` can run. */
const JOIN_LOOKBACK_MS = 60 * 60 * 1000;

/**
 * The executor's two watches: signed results as they are stored (from now on; older ones are a direct get away), and
 * agent registrations of the last hour indexed by site, node and role (so a resumed `wait.agentJoined` finds a
 * ramdisk that joined while no executor was running).
 */
export async function startAgentWatches(nc: NatsConnection, store: EventStore, log: Logger) {
  const [results, joins] = await Promise.all([startResultWatch(nc, log), startJoinWatch(nc, store, log)]);
  return { results, joins };
}

/** Signed results as the result intake stores them, keyed by their stored subject (from now on; older ones are a direct get away). */
export async function startResultWatch(nc: NatsConnection, log: Logger): Promise<StreamWatch<StoredMsg>> {
  const results = new StreamWatch<StoredMsg>(nc, {
    stream: Streams.agentResults.name,
    filter: Subjects.allAcceptedAgentResults,
    from: 'new',
    extract: (msg: JsMsg) => [[msg.subject, { seq: msg.seq, subject: msg.subject, data: msg.data } as StoredMsg]],
    log,
  });
  await results.start();
  return results;
}

/** Registrations as the event store wrote them (anything else on `bc.evt.trust.>` is ignored; the projectors dead-letter it). */
async function startJoinWatch(nc: NatsConnection, store: EventStore, log: Logger): Promise<StreamWatch<AgentJoin>> {
  const joins = new StreamWatch<AgentJoin>(nc, {
    stream: Streams.events.name,
    filter: Subjects.moduleEvents('trust'),
    from: new Date(Date.now() - JOIN_LOOKBACK_MS),
    extract: (msg: JsMsg) =>
      (knownEvents(store.decode(msg), eventCatalog).events ?? []).flatMap(({ event, metadata }) => {
        if (event.type !== 'AgentRegistered' && event.type !== 'AgentKeyRotated') return [];
        const { siteId, nodeId, role, agentId, keyId, joinTokenId } = event.data;
        const join = { agentId, keyId, atMs: Date.parse(metadata.time), rotation: event.type === 'AgentKeyRotated', ...(joinTokenId ? { joinTokenId } : {}) };
        return nodeId ? [[joinKey(siteId, nodeId, role), join] as const] : [];
      }),
    log,
  });
  await joins.start();
  return joins;
}
