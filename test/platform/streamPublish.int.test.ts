import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { streamPublisher, type StreamPublish } from '../../services/platform/nats/streamPublish.ts';
import { isWrongLastSequence } from '../../services/platform/nats/wrongLastSequence.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';

/** The headers an append sends, built as nats.js builds them. */
function appendHeaders(msgId: string, expectedSeq: number, extra = 'x'): MsgHdrs {
  const h = headers();
  h.set('Bc-Extra', extra);
  h.set('Nats-Msg-Id', msgId);
  h.set('Nats-Expected-Last-Subject-Sequence', String(expectedSeq));
  return h;
}

/** What a publish came to, in a form two publishers' outcomes can be compared by. */
async function outcome(publish: Promise<unknown>): Promise<unknown> {
  try {
    return { ack: await publish };
  } catch (err) {
    const e = err as Error & { code?: number; cause?: Error & { isNoResponders?: () => boolean } };
    return { error: e.constructor.name, message: e.message, code: e.code, conflict: isWrongLastSequence(e), noResponders: e.cause?.isNoResponders?.() };
  }
}

async function withServer(test: (nc: NatsConnection, js: JetStreamClient, ours: StreamPublish) => Promise<void>, jsTimeout?: number) {
  await using nats = await startTestNats();
  const nc = await connectNats(nats.url, 'stream-publish');
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'SP', subjects: ['sp.>'] });
    const js = jetstream(nc, jsTimeout ? { timeout: jsTimeout } : {});
    await test(nc, js, streamPublisher(js));
  } finally {
    await nc.close();
  }
}

describe('streamPublisher', () => {
  it('stores the message js.publish stores and answers as it answers: stored, duplicate, moved on', async () => {
    await withServer(async (nc, js, ours) => {
      const jsm = await jetstreamManager(nc);
      const payload = Buffer.from('{"events":[{"name":"é 雪"}]}');
      const theirs = (subject: string, h: MsgHdrs) => js.publish(subject, payload, { headers: h });
      const first = { theirs: await outcome(theirs('sp.a', appendHeaders('a-1', 0))), ours: await outcome(ours('sp.b', payload, appendHeaders('b-1', 0))) };
      expect(first.theirs).toEqual({ ack: expect.objectContaining({ seq: 1, duplicate: false }) });
      expect(first.ours).toEqual({ ack: { seq: 2, duplicate: false } });
      const [a, b] = [await jsm.streams.getMessage('SP', { seq: 1 }), await jsm.streams.getMessage('SP', { seq: 2 })];
      expect(Buffer.from(b!.data)).toEqual(Buffer.from(a!.data));
      expect(b!.header.get('Bc-Extra')).toBe(a!.header.get('Bc-Extra'));
      expect(b!.header.get('Nats-Expected-Last-Subject-Sequence')).toBe('0');
      expect(b!.header.get('Nats-Msg-Id')).toBe('b-1');

      // The same message id again: the original's sequence, as a duplicate.
      expect(await outcome(ours('sp.b', payload, appendHeaders('b-1', 0)))).toEqual({ ack: { seq: 2, duplicate: true } });
      expect(await outcome(theirs('sp.a', appendHeaders('a-1', 0)))).toEqual({ ack: expect.objectContaining({ seq: 1, duplicate: true }) });

      // An expectation the subject moved past: the same refusal (API error 10071), which append reads as a conflict.
      const stale = { theirs: await outcome(theirs('sp.a', appendHeaders('a-2', 0))), ours: await outcome(ours('sp.b', payload, appendHeaders('b-2', 0))) };
      expect(stale.ours).toMatchObject({ error: 'JetStreamApiError', code: 10071, conflict: true });
      expect({ ...(stale.ours as object), message: '' }).toEqual({ ...(stale.theirs as object), message: '' });
    });
  });

  it('fails as js.publish fails: no stream for the subject, no answer in time, a closed connection', async () => {
    await withServer(async (nc, js, ours) => {
      const payload = Buffer.from('{}');
      // No stream stores `other.x`: the server answers "no responders".
      const unbound = {
        theirs: await outcome(js.publish('other.x', payload, { headers: appendHeaders('o-1', 0) })),
        ours: await outcome(ours('other.x', payload, appendHeaders('o-2', 0))),
      };
      expect(unbound.ours).toEqual({ error: 'JetStreamNotEnabled', message: 'jetstream is not enabled', code: undefined, conflict: false, noResponders: true });
      expect(unbound.ours).toEqual(unbound.theirs);

      // Something takes `quiet.x` but never answers: the client's timeout (200 ms here).
      nc.subscribe('quiet.x', { callback: () => {} });
      const silent = {
        theirs: await outcome(js.publish('quiet.x', payload, { headers: appendHeaders('q-1', 0) })),
        ours: await outcome(ours('quiet.x', payload, appendHeaders('q-2', 0))),
      };
      expect(silent.ours).toMatchObject({ error: 'TimeoutError' });
      expect(silent.ours).toEqual(silent.theirs);

      // The connection closes while both wait, then both publish on the closed connection.
      const waiting = [
        outcome(js.publish('quiet.x', payload, { headers: appendHeaders('q-3', 0) })),
        outcome(ours('quiet.x', payload, appendHeaders('q-4', 0))),
      ];
      await nc.close();
      const [theirsWaiting, oursWaiting] = await Promise.all(waiting);
      expect(oursWaiting).toMatchObject({ error: 'RequestError', message: 'connection closed' });
      expect((oursWaiting as { error: string }).error).toBe((theirsWaiting as { error: string }).error);
      const closed = {
        theirs: await outcome(js.publish('sp.a', payload, { headers: appendHeaders('c-1', 0) })),
        ours: await outcome(ours('sp.b', payload, appendHeaders('c-2', 0))),
      };
      expect(closed.ours).toMatchObject({ error: 'ClosedConnectionError' });
      expect(closed.ours).toEqual(closed.theirs);
    }, 200);
  });

  it('fails as js.publish fails when the server refuses the publish for permissions, at once rather than at its timeout', async () => {
    using dir = tempDir('bc-stream-publish-');
    const config = join(dir.path, 'nats.conf');
    const store = join(dir.path, 'store');
    writeFileSync(
      config,
      `jetstream { store_dir: "${store}" }\n` +
        'authorization { users = [ { user: "w", password: "w", permissions: { publish: { allow: ["$JS.API.>", "sp.>"], deny: ["sp.denied"] }, subscribe: { allow: ["_INBOX.>"] } } } ] }\n',
    );
    const server = await startNatsServer({ storeDir: store, configFile: config });
    const nc = await connect({ servers: server.url, user: 'w', pass: 'w', noAsyncTraces: true });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'SP', subjects: ['sp.>'] });
      // Long enough that a publish left to its timeout fails the test's own time limit.
      const js = jetstream(nc, { timeout: 30_000 });
      const ours = streamPublisher(js);
      const payload = Buffer.from('{}');
      expect(await outcome(ours('sp.allowed', payload, appendHeaders('p-0', 0)))).toEqual({ ack: { seq: 1, duplicate: false } });
      const theirs = await outcome(js.publish('sp.denied', payload, { headers: appendHeaders('p-1', 0) }));
      const refused = await outcome(ours('sp.denied', payload, appendHeaders('p-2', 0)));
      expect(refused).toMatchObject({ error: 'RequestError', message: expect.stringContaining('Permissions Violation') });
      expect(refused).toEqual(theirs);
    } finally {
      await nc.close();
      await server.stop();
    }
  });
});
