import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { StoredEvent } from '../../schemas/envelope.ts';
import type { LogEntry } from '../../services/platform/eventStore/eventStore.ts';
import { replaySubject } from '../../services/platform/eventStore/subjectReplay.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';

const event = (commandId: string, siteId: string): StoredEvent => ({
  type: 'SiteCreated',
  version: 2,
  data: { siteId, name: commandId, provisioningCidrs: [] },
  metadata: siteEventMetadata(commandId, siteId),
});

let env: Awaited<ReturnType<typeof startBackbone>>;
beforeAll(async () => {
  env = await startBackbone({ projectors: false });
}, 30_000);
afterAll(async () => {
  await env[Symbol.asyncDispose]();
});

let run = 0;

/**
 * Any layout of appends over a few subjects, and any window (after, through] of stream sequences around it: the
 * replay yields what a direct get per message yields, message for message.
 */
describe('replaySubject', () => {
  test.prop([fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 40 }), fc.nat(), fc.nat(), fc.boolean()], { numRuns: 50 })(
    'yields the messages one direct get each yields, for any window of sequences',
    async (layout, afterPick, throughPick, bounded) => {
      const prefix = `bc.evt.site.site.r${run++}x`;
      const last = new Map<number, number>();
      for (const [i, s] of layout.entries()) {
        const commandId = `${prefix}-${i}`;
        const ack = await env.store.append(`${prefix}${s}`, { events: [event(commandId, `r${s}`)] }, { expectedSeq: last.get(s) ?? 0, msgId: commandId });
        last.set(s, ack.seq);
      }
      const top = Math.max(...last.values());
      const bottom = top - layout.length;
      const afterSeq = bottom + (afterPick % (layout.length + 2));
      const throughSeq = bounded ? afterSeq + (throughPick % (layout.length + 2)) : Infinity;
      const subject = `${prefix}${layout[0]}`;
      const replayed: LogEntry[] = [];
      for await (const m of replaySubject(env.nc, env.store.stream, subject, afterSeq, throughSeq)) replayed.push(env.store.decode(m));
      const direct: LogEntry[] = [];
      for await (const e of env.store.directEntriesAfter(subject, afterSeq, throughSeq)) direct.push(e);
      expect(replayed).toEqual(direct);
    },
    60_000,
  );
});
