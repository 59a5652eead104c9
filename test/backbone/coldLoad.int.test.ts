import { headers, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { EventStore } from '../../services/platform/eventStore/eventStore.ts';
import { replaySubject } from '../../services/platform/eventStore/subjectReplay.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { perEventReads } from '../../scripts/bench/measure/coldLoad.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';

const LENGTHS = [0, 1, 2, 4, 5, 6, 100] as const;
const NOISE = 'bc.evt.site.site.noise';

const event = (commandId: string, siteId: string, n: number): StoredEvent => ({
  type: 'SiteCreated',
  version: 2,
  data: { siteId, name: `name ${n}`, provisioningCidrs: [] },
  metadata: siteEventMetadata(commandId, siteId),
});

/** Counts the requests (round trips) sent on `nc` while `run` runs: direct gets and consumer creates (replays) alike. */
async function requestsOf<T>(nc: NatsConnection, run: () => Promise<T>): Promise<{ result: T; requests: number; replays: number }> {
  const request = nc.request.bind(nc);
  let requests = 0;
  let replays = 0;
  nc.request = (...args) => {
    requests++;
    if (args[0].startsWith('$JS.API.CONSUMER.CREATE.')) replays++;
    return request(...args);
  };
  try {
    const result = await run();
    return { result, requests, replays };
  } finally {
    nc.request = request;
  }
}

const coldLoad = (store: EventStore, siteId: string) => new AggregateRepository(store).load(siteAggregate, siteId);

describe('cold aggregate loads', () => {
  it('read by the walk back or one replay what one direct get per event reads, for 0 to 100 events and after appends', { timeout: 60_000 }, async () => {
    await using env = await startBackbone({ projectors: false });
    const last = new Map<string, number>();
    const counts = new Map<string, number>();
    let n = 0;
    // `len<n>` aggregates are written with their position, as the command bus appends; `old<n>` ones without (older code).
    const append = async (subject: string, siteId: string) => {
      const commandId = `cmd-${(n++).toString().padStart(6, '0')}`;
      const position = siteId.startsWith('old') ? undefined : (counts.get(siteId) ?? 0) + 1;
      const ack = await env.store.append(
        subject,
        { events: [event(commandId, siteId, n)] },
        { expectedSeq: last.get(subject) ?? 0, msgId: commandId, position },
      );
      last.set(subject, ack.seq);
      counts.set(siteId, (counts.get(siteId) ?? 0) + 1);
    };
    // Interleaved with another subject's messages, so the subjects' sequences are far apart (a replay, not a get each).
    const appendRound = async (round: number) => {
      for (const length of LENGTHS) {
        if (round >= length) continue;
        for (const written of ['len', 'old']) {
          await append(`bc.evt.site.site.${written}${length}`, `${written}${length}`);
          await append(NOISE, 'noise');
        }
      }
    };
    for (let round = 0; round < 100; round++) await appendRound(round);

    const compare = async (written: 'len' | 'old') => {
      const rows = [];
      for (const length of LENGTHS) {
        const siteId = `${written}${length}`;
        const replayed = await requestsOf(env.nc, () => coldLoad(env.store, siteId));
        const perEvent = await requestsOf(env.nc, () => coldLoad(perEventReads(env.store), siteId));
        expect(replayed.result).toEqual(perEvent.result);
        const replayedEntries = [];
        for await (const e of env.store.entriesAfter(`bc.evt.site.site.${siteId}`, 0)) replayedEntries.push(e);
        const perEventEntries = [];
        for await (const e of env.store.directEntriesAfter(`bc.evt.site.site.${siteId}`, 0)) perEventEntries.push(e);
        expect(replayedEntries).toEqual(perEventEntries);
        expect(replayedEntries).toHaveLength(counts.get(siteId) ?? 0);
        expect(replayed.result.length).toBe(counts.get(siteId) ?? 0);
        rows.push({ length, seq: replayed.result.seq, replayed: replayed.requests, replays: replayed.replays, perEvent: perEvent.requests });
      }
      return rows;
    };
    const before = await compare('len');
    // The last message comes with the sequence check and tells how many precede it: up to 4 are read by the sequence
    // each names as its predecessor (exact gets, no consumer), more in one replay at once, whatever their number.
    expect(before.map((r) => [r.length, r.replayed, r.replays])).toEqual([
      [0, 1, 0],
      [1, 1, 0],
      [2, 2, 0],
      [4, 4, 0],
      [5, 5, 0],
      [6, 2, 1],
      [100, 2, 1],
    ]);
    // Messages without a position (older code) walk back 4 gets first, then replay the rest.
    const old = await compare('old');
    expect(old.map((r) => [r.length, r.replayed, r.replays])).toEqual([
      [0, 1, 0],
      [1, 1, 0],
      [2, 2, 0],
      [4, 4, 0],
      [5, 5, 0],
      [6, 6, 1],
      [100, 6, 1],
    ]);
    expect(before.map((r) => [r.length, r.perEvent])).toEqual([
      [0, 1],
      [1, 1],
      [2, 2],
      [4, 4],
      [5, 5],
      [6, 6],
      [100, 100],
    ]);

    for (let round = 100; round < 103; round++) await appendRound(round);
    await append('bc.evt.site.site.len0', 'len0');
    const after = await compare('len');
    expect(after.find((r) => r.length === 0)?.seq).toBe(last.get('bc.evt.site.site.len0'));
    expect(after.find((r) => r.length === 100)?.seq).toBe(last.get('bc.evt.site.site.len100'));
  });

  it(
    'walk back to a message on the chain that names no predecessor it can be trusted for (unsigned, forged, without its expected sequence, deleted) and replay from there',
    { timeout: 60_000 },
    async () => {
      await using env = await startBackbone({ projectors: false });
      const last = new Map<string, number>();
      // Messages per subject, odd ones included: genuine ones carry their position, as the command bus writes it.
      const positions = new Map<string, number>();
      let n = 0;
      const genuine = async (siteId: string) => {
        const subject = `bc.evt.site.site.${siteId}`;
        const commandId = `${siteId}-${n++}`;
        const position = (positions.get(subject) ?? 0) + 1;
        const ack = await env.store.append(
          subject,
          { events: [event(commandId, siteId, n)] },
          { expectedSeq: last.get(subject) ?? 0, msgId: commandId, position },
        );
        last.set(subject, ack.seq);
        positions.set(subject, position);
        // Another aggregate's messages in between: the subject's span of sequences holds more than its messages.
        for (let i = 0; i < 3; i++) await append(NOISE);
        return ack.seq;
      };
      const append = async (subject: string) => {
        const commandId = `noise-${n++}`;
        last.set(
          subject,
          (await env.store.append(subject, { events: [event(commandId, 'noise', n)] }, { expectedSeq: last.get(subject) ?? 0, msgId: commandId })).seq,
        );
      };
      const payload = (siteId: string) => new TextEncoder().encode(JSON.stringify({ events: [event(`odd-${siteId}`, siteId, 0)] }));
      /** Publishes a message the event store did not write on the aggregate's subject, as whoever may publish there could. */
      const odd: Record<string, (siteId: string) => Promise<number>> = {
        unsigned: async (siteId) => {
          const subject = `bc.evt.site.site.${siteId}`;
          return (await env.store.js.publish(subject, payload(siteId), { expect: { lastSubjectSequence: last.get(subject) ?? 0 } })).seq;
        },
        forged: async (siteId) => {
          const subject = `bc.evt.site.site.${siteId}`;
          const hdrs = headers();
          const signed = await env.store.jsm.direct.getMessage(env.store.stream, { seq: last.get(subject)! });
          // A genuine MAC of the message before, and an expected sequence the server checks but the MAC does not cover.
          hdrs.set('Bc-Event-Mac', signed!.header.get('Bc-Event-Mac'));
          return (
            await env.store.js.publish(subject, payload(siteId), {
              headers: hdrs,
              msgID: `forged-${siteId}`,
              expect: { lastSubjectSequence: last.get(subject)! },
            })
          ).seq;
        },
        'no expected sequence': async (siteId) => {
          const subject = `bc.evt.site.site.${siteId}`;
          const hdrs = headers();
          const messageId = env.store.mac.messageId(`odd-${siteId}`);
          hdrs.set('Bc-Event-Mac', env.store.mac.sign(subject, messageId, last.get(subject)!, payload(siteId)));
          return (await env.store.js.publish(subject, payload(siteId), { headers: hdrs, msgID: messageId })).seq;
        },
        // Deleted once the messages after it are appended (the server checks an append against the subject's last).
        deleted: genuine,
      };
      const reasons: Record<string, string | undefined> = { unsigned: 'MAC_MISSING', forged: 'MAC_INVALID', 'no expected sequence': 'MAC_INVALID' };
      for (const [kind, publish] of Object.entries(odd)) {
        const siteId = kind.replaceAll(' ', '-');
        const subject = `bc.evt.site.site.${siteId}`;
        await genuine(siteId);
        await genuine(siteId);
        const oddSeq = await publish(siteId);
        last.set(subject, oddSeq);
        if (kind !== 'deleted') positions.set(subject, positions.get(subject)! + 1);
        const beforeLast = await genuine(siteId);
        const lastSeq = await genuine(siteId);
        if (kind === 'deleted') await env.store.jsm.streams.deleteMessage(env.store.stream, oddSeq);
        // The last message says 4 precede it, few enough to walk back: the walk reads the message before the last,
        // then the odd one, which names no usable predecessor: a replay through it follows (reading it again), and
        // the walked message after it.
        expect(await env.store.lastEntry(subject)).toMatchObject({ entry: { position: 5 } });
        const loaded = await requestsOf(env.nc, () => coldLoad(env.store, siteId));
        expect([kind, loaded.requests, loaded.replays]).toEqual([kind, 4, 1]);
        expect(loaded.result).toEqual(await coldLoad(perEventReads(env.store), siteId));
        expect(loaded.result.seq).toBe(lastSeq);
        const walked = [];
        for await (const e of env.store.entriesEndingAt(subject, 0, beforeLast)) walked.push(e);
        const perEvent = [];
        for await (const e of env.store.directEntriesAfter(subject, 0, beforeLast)) perEvent.push(e);
        expect(walked).toEqual(perEvent);
        const odd = kind === 'deleted' ? [] : [reasons[kind]];
        expect([kind, walked.map((e) => e.rejection?.reason)]).toEqual([kind, [undefined, undefined, ...odd, undefined]]);
        if (kind !== 'deleted') continue;
        // Where a replica may lag (a cluster), a message the chain names and the replay does not reach is one the
        // replica has not stored yet: the read stops before it, and the load reads again at the leader.
        const clustered = await EventStore.open(env.nc, env.store.mac, { replicas: 3 });
        const fromReplica = [];
        for await (const e of clustered.entriesEndingAt(subject, 0, beforeLast)) fromReplica.push(e.seq);
        expect(fromReplica).toEqual(perEvent.slice(0, 2).map((e) => e.seq));
        const fromLeader = [];
        for await (const e of clustered.entriesEndingAt(subject, 0, beforeLast, 'leader')) fromLeader.push(e);
        expect(fromLeader).toEqual(perEvent);
        expect(await coldLoad(clustered, siteId)).toEqual(loaded.result);
      }
    },
  );

  it('leave no consumer behind on the stream', { timeout: 30_000 }, async () => {
    await using env = await startBackbone({ projectors: false });
    const last = { s1: 0, noise: 0 };
    for (let i = 0; i < 5; i++) {
      for (const id of ['s1', 'noise'] as const) {
        const commandId = `${id}-${i}`;
        last[id] = (await env.store.append(`bc.evt.site.site.${id}`, { events: [event(commandId, id, i)] }, { expectedSeq: last[id], msgId: commandId })).seq;
      }
    }
    for (let i = 0; i < 10; i++) await coldLoad(env.store, 's1');
    // A sequence past the stream's end reads nothing (the API's `afterSeq` may be any number).
    for await (const _ of env.store.readAfter('bc.evt.site.site.s1', 1e9)) expect.unreachable();
    // A reader that stops early deletes its consumer too.
    for await (const _ of env.store.readAfter('bc.evt.site.site.s1', 0)) break;
    const consumers = async () => (await env.store.jsm.streams.info(env.store.stream)).state.consumer_count;
    for (let i = 0; (await consumers()) > 0 && i < 20; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await consumers()).toBe(0);
  });

  it(
    'answer a stream that is not there with UNAVAILABLE, as direct gets do (at once, where a direct get waits out its timeout)',
    { timeout: 30_000 },
    async () => {
      await using env = await startBackbone({ projectors: false });
      const drain = async (read: AsyncIterable<unknown>) => {
        for await (const _ of read) void _;
      };
      await expect(drain(replaySubject(env.nc, 'BC_NO_SUCH_STREAM', 'bc.evt.site.site.s1', 0))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await env.store.jsm.streams.delete(env.store.stream);
      await expect(drain(env.store.entriesAfter('bc.evt.site.site.s1', 0))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    },
  );
});
