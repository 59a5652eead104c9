import { STREAM_DOES_NOT_EXIST, type Event } from '@event-driven-io/emmett';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { nodeAggregate, type NodeAggregateState } from '../../../services/metal/node/node.ts';
import { AggregateRepository } from '../../../services/platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { processCpuSeconds } from '../cpuMeter.ts';
import { nodeBatch } from '../payloads.ts';
import { productAppender } from '../productAppend.ts';
import type { PeerDatabase } from './postgres.ts';

/**
 * One event store under the peer bench's workload: the same node aggregates, the same ~240-byte NodeMaintenanceSet
 * events with the same metadata, the same fold (`nodeAggregate.evolve`).
 */
export interface Contender {
  /** `ours`, `emmett`, or `emmett-async-commit`. */
  readonly name: string;
  /** What the server process is, for the table: `nats-server` or `postgres`. */
  readonly server: string;
  /** CPU seconds the server used so far; undefined where it cannot be read (another host). */
  serverCpuSeconds(): number | undefined;
  /** Appends event `n` to aggregate `id`, expecting the version this contender last wrote there (optimistic check). */
  append(id: string, n: number): Promise<void>;
  /** Folds aggregate `id` from its first event, with nothing cached (a process's first read of it). */
  coldLoad(id: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The project's event store: `EventStore.append` as the command bus calls it (expected last subject sequence plus a
 * message id, its position and the state it carries, MAC signed: `productAppender`), and a cold load through
 * `AggregateRepository.load` on a fresh repository, so the product's read path is measured as it stands (MAC verified,
 * catalog parsed, whatever number of requests it takes). `carried: false` (`ours-without-state`): appends without a
 * state and loads by the events alone, as before states were carried.
 */
export function ours(store: EventStore, natsPid: number | undefined, options: { carried?: boolean } = {}): Contender {
  const append = productAppender(store, options);
  return {
    name: options.carried === false ? 'ours-without-state' : 'ours',
    server: 'nats-server',
    serverCpuSeconds: () => (natsPid === undefined ? undefined : processCpuSeconds(natsPid)),
    async append(id, n) {
      const commandId = `${id}-c${n}`;
      const ack = await append(id, nodeBatch(id, commandId, n));
      if (ack.duplicate) throw new Error(`append ${commandId} answered duplicate`);
    },
    async coldLoad(id) {
      const { seq } = await new AggregateRepository(store).load(nodeAggregate, id, 'replica', options);
      if (seq === 0) throw new Error(`ours: cold load of ${id} found no events`);
    },
    close: async () => undefined,
  };
}

type EmmettNodeEvent = Event<string, Record<string, unknown>, Record<string, unknown>>;

/**
 * emmett 0.42 on PostgreSQL as its docs use it: `appendToStream` with the expected stream version, and
 * `aggregateStream` (one SELECT of the stream's rows) folded by the same evolve. It trusts what it reads: no MAC, no
 * schema parse, so the client CPU compares our verified read with an unverified one. With `asyncCommit` its sessions
 * run with `synchronous_commit=off`: a commit no longer waits for the WAL's fsync, as nats-server 2.9 acknowledges an
 * append before its (periodic) fsync, so the two appends promise the same durability.
 */
export function emmett(db: PeerDatabase, options: { asyncCommit?: boolean } = {}): Contender {
  const url = options.asyncCommit ? `${db.url}${db.url.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c synchronous_commit=off')}` : db.url;
  const store = getPostgreSQLEventStore(url);
  const versions = new Map<string, bigint>();
  const stream = (id: string) => `metal.node-${id}`;
  return {
    name: options.asyncCommit ? 'emmett-async-commit' : 'emmett',
    server: 'postgres',
    serverCpuSeconds: () => db.serverCpuSeconds(),
    async append(id, n) {
      const commandId = `${id}-c${n}`;
      const [stored] = nodeBatch(id, commandId, n).events;
      const event: EmmettNodeEvent = { type: stored!.type, data: stored!.data as Record<string, unknown>, metadata: stored!.metadata };
      const result = await store.appendToStream(stream(id), [event], { expectedStreamVersion: versions.get(id) ?? STREAM_DOES_NOT_EXIST });
      versions.set(id, result.nextExpectedStreamVersion);
    },
    async coldLoad(id) {
      const { streamExists } = await store.aggregateStream<NodeAggregateState, EmmettNodeEvent>(stream(id), {
        evolve: (state: NodeAggregateState, event: EmmettNodeEvent) => nodeAggregate.evolve(state, { type: event.type, data: event.data } as MetalEvent),
        initialState: () => nodeAggregate.initialState,
      });
      if (!streamExists) throw new Error(`emmett: cold load of ${id} found no events`);
    },
    close: () => store.close(),
  };
}
