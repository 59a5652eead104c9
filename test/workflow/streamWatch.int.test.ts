import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { StreamWatch } from '../../services/agents/streamWatch.ts';
import { startTestNats } from '../support/natsServer.ts';

const subject = (id: string) => `bc.site.dc1.accepted.n1.${id}`;

describe('StreamWatch', () => {
  it('wakes waiters by key, times out without a value, and keeps watching across a nats-server restart', { timeout: 60_000 }, async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'watch-test');
    try {
      await ensureStreams(nc, loadConfig({}, { natsUrl: nats.url }));
      const js = jetstream(nc);
      await js.publish(subject('before'), 'old');
      const watch = new StreamWatch<string>(nc, {
        stream: Streams.agentResults.name,
        filter: Subjects.allAcceptedAgentResults,
        from: 'new',
        extract: (msg) => [[msg.subject, msg.string()]],
        log: createLogger('test', 'silent'),
      });
      await watch.start();
      const signal = new AbortController().signal;
      // Stored before the watch started: not its business (callers direct-get those).
      expect(await watch.next(subject('before'), () => true, 200, signal)).toBeUndefined();

      const waiting = watch.next(subject('a'), () => true, 10_000, signal);
      await js.publish(subject('a'), 'first');
      expect(await waiting).toBe('first');
      // Seen values are kept: a late waiter gets it at once.
      expect(await watch.next(subject('a'), () => true, 0, signal)).toBe('first');

      await nats.restart();
      const afterRestart = watch.next(subject('b'), () => true, 30_000, signal);
      await expect
        .poll(
          async () =>
            await js
              .publish(subject('b'), 'second')
              .then(() => true)
              .catch(() => false),
          { timeout: 20_000 },
        )
        .toBe(true);
      expect(await afterRestart).toBe('second');

      const aborter = new AbortController();
      const aborted = watch.next(subject('never'), () => true, 30_000, aborter.signal);
      aborter.abort(new Error('stopping'));
      await expect(aborted).rejects.toThrow('stopping');
      await watch.stop();
    } finally {
      await nc.close();
    }
  });

  it('reopened on request, picks up at the next sequence: nothing read twice, nothing missed', { timeout: 60_000 }, async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'watch-reopen-test');
    try {
      await ensureStreams(nc, loadConfig({}, { natsUrl: nats.url }));
      const js = jetstream(nc);
      const read: string[] = [];
      const watch = new StreamWatch<string>(nc, {
        stream: Streams.agentResults.name,
        filter: Subjects.allAcceptedAgentResults,
        from: 'new',
        extract: (msg) => (read.push(msg.string()), [[msg.subject, msg.string()]]),
        reopenAfterMs: 0,
        log: createLogger('test', 'silent'),
      });
      await watch.start();
      const signal = new AbortController().signal;
      const first = watch.next(subject('a'), () => true, 10_000, signal);
      await js.publish(subject('a'), 'one');
      expect(await first).toBe('one');
      for (const value of ['two', 'three']) {
        watch.reopen();
        const next = watch.next(subject('a'), (v) => v === value, 10_000, signal);
        await js.publish(subject('a'), value);
        expect(await next).toBe(value);
      }
      expect(read).toEqual(['one', 'two', 'three']);
      await watch.stop();
    } finally {
      await nc.close();
    }
  });
});
