import type { NatsConnection } from '@nats-io/transport-node';
import { nodeAggregate } from '../../../services/metal/node/node.ts';
import { AggregateRepository } from '../../../services/platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { cpuMeter } from '../cpuMeter.ts';
import type { Figure } from '../figure.ts';
import { nodeBatch } from '../payloads.ts';
import { productAppender } from '../productAppend.ts';

/**
 * The reads compared: the product's (the last message's get and the state it carries), the product's by the events
 * alone (the read before states were carried: the last message's get, the walk back by predecessor gets, a replay),
 * the last message's get and one replay of the rest (the read before the walk back), and one direct get per event.
 */
const METHODS = ['product', 'events', 'replay', 'perEvent'] as const;
type Method = (typeof METHODS)[number];

/** More messages per length than the event store's decode memo keeps (2,048), so every load verifies and parses. */
const MESSAGES_PER_LENGTH = 2_400;
/** Loads timed back to back before the other method takes its turn. */
const BLOCK = 50;

interface Tally {
  ms: number[];
  requests: number;
  cpu: Record<string, number>;
}

/** The store as a repository reads it, with what precedes the last message read by `entriesAfter` (one replay). */
const replayReads = (store: EventStore): EventStore =>
  ({
    readsMayLag: store.readsMayLag,
    lastEntry: store.lastEntry.bind(store),
    entriesAfter: store.entriesAfter.bind(store),
    entriesEndingAt: store.entriesAfter.bind(store),
  }) as unknown as EventStore;

/** The store as a repository reads it, with the messages after a sequence read by one direct get each (the old read). */
export const perEventReads = (store: EventStore): EventStore =>
  ({
    readsMayLag: store.readsMayLag,
    lastEntry: store.lastEntry.bind(store),
    entriesAfter: store.directEntriesAfter.bind(store),
    entriesEndingAt: store.directEntriesAfter.bind(store),
  }) as unknown as EventStore;

/** Counts the requests (round trips) sent on `nc` from now on: direct gets and consumer creates alike. */
function countRequests(nc: NatsConnection): { readonly count: number; stop(): void } {
  const request = nc.request.bind(nc);
  let count = 0;
  nc.request = (...args) => {
    count++;
    return request(...args);
  };
  return {
    get count() {
      return count;
    },
    stop: () => void (nc.request = request),
  };
}

/**
 * Appends `aggregates` node aggregates of `length` events each (enrolled, then maintenance toggles), interleaved round
 * by round, as the command bus writes them (positions and carried states: `productAppender`).
 */
async function appendAggregates(store: EventStore, prefix: string, aggregates: number, length: number): Promise<string[]> {
  const ids = Array.from({ length: aggregates }, (_, i) => `${prefix}-${i}`);
  const append = productAppender(store);
  for (let round = 0; round < length; round++) await Promise.all(ids.map((id) => append(id, nodeBatch(id, `${id}-c${round}`, round))));
  return ids;
}

const OLD_READS: Record<Method, string> = {
  product: '',
  events: ' [before: by the events alone]',
  replay: ' [old: the last message, then one replay]',
  perEvent: ' [old: a direct get per event]',
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * Cold aggregate loads (`AggregateRepository.load` with nothing cached) of 4- and 100-event node aggregates on the
 * stream as the bench left it, the product's read against the two older reads (`METHODS`) in the same run: blocks of
 * `BLOCK` loads, the methods in turn and the first of each round rotating. Requests are the round trips sent.
 */
export async function measureColdLoads(store: EventStore, options: { loads: number }, step: (what: string) => void): Promise<Figure[]> {
  const figures: Figure[] = [];
  const stores: Record<Method, EventStore> = { product: store, events: store, replay: replayReads(store), perEvent: perEventReads(store) };
  for (const length of [4, 100]) {
    const ids = await appendAggregates(store, `cold${length}`, Math.ceil(MESSAGES_PER_LENGTH / length), length);
    const tallies = Object.fromEntries(METHODS.map((m) => [m, { ms: [], requests: 0, cpu: {} }])) as unknown as Record<Method, Tally>;
    let next = 0;
    const block = async (method: Method, loads: number) => {
      const tally = tallies[method];
      const requests = countRequests(store.nc);
      const cpu = cpuMeter();
      for (let i = 0; i < loads; i++) {
        const id = ids[next++ % ids.length]!;
        const started = performance.now();
        const { seq } = await new AggregateRepository(stores[method]).load(nodeAggregate, id, 'replica', { carried: method === 'product' });
        tally.ms.push(performance.now() - started);
        if (seq === 0) throw new Error(`cold load of ${id} found no events`);
      }
      requests.stop();
      tally.requests += requests.count;
      for (const [k, v] of Object.entries(cpu())) tally.cpu[k] = (tally.cpu[k] ?? 0) + v;
    };
    // Warm-up: JIT and the server's caches for both methods.
    for (const method of METHODS) await block(method, Math.min(BLOCK, options.loads));
    for (const m of METHODS) Object.assign(tallies[m], { ms: [], requests: 0, cpu: {} });
    for (let b = 0; b * BLOCK < options.loads; b++) {
      const loads = Math.min(BLOCK, options.loads - b * BLOCK);
      // The first of each round rotates.
      for (let i = 0; i < METHODS.length; i++) await block(METHODS[(b + i) % METHODS.length]!, loads);
    }
    for (const method of METHODS) {
      const tally = tallies[method];
      const sorted = [...tally.ms].sort((a, b) => a - b);
      const seconds = tally.ms.reduce((a, b) => a + b, 0) / 1000;
      const n = sorted.length;
      const perLoadMs = (k: string) => (tally.cpu[k] === undefined ? undefined : Math.round((1e6 * tally.cpu[k]) / n) / 1000);
      const detail = {
        events: length,
        requestsPerLoad: tally.requests / n,
        p50Ms: Math.round(percentile(sorted, 50) * 1000) / 1000,
        p99Ms: Math.round(percentile(sorted, 99) * 1000) / 1000,
        cpuMsPerLoad: { bench: perLoadMs('bench'), nats: perLoadMs('nats') },
        aggregates: ids.length,
      };
      const key = method === 'product' ? `coldLoad${length}` : `coldLoad${length}:${method}`;
      const label = `cold load, ${length} events${OLD_READS[method]}`;
      figures.push({ key, label, count: n, seconds, rate: n / seconds, unit: 'loads/s', target: { kind: 'none' }, cpu: tally.cpu, detail });
      step(
        `  ${label}: ${detail.requestsPerLoad} requests, p50 ${detail.p50Ms} ms, p99 ${detail.p99Ms} ms, cpu bench/nats ${detail.cpuMsPerLoad.bench}/${detail.cpuMsPerLoad.nats} ms per load`,
      );
    }
  }
  return figures;
}
