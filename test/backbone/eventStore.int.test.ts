import { describe, expect, it } from 'vitest';
import { ConcurrencyError } from '../../services/platform/errors.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';

const event = (commandId: string, n: number): StoredEvent => ({
  type: 'SiteCreated',
  version: 2,
  data: { siteId: `s${n}`, name: 'x', provisioningCidrs: [] },
  metadata: siteEventMetadata(commandId, `s${n}`),
});

describe('EventStore', () => {
  it('appends with the expected subject sequence and reads back in order', async () => {
    await using env = await startBackbone({ projectors: false });
    const subject = 'bc.evt.site.site.s1';
    expect(await env.store.lastSequence(subject)).toBe(0);
    const a = await env.store.append(subject, { events: [event('cmd-00001', 1)] }, { expectedSeq: 0, msgId: 'cmd-00001' });
    const b = await env.store.append(subject, { events: [event('cmd-00002', 1)] }, { expectedSeq: a.seq, msgId: 'cmd-00002' });
    expect(b.seq).toBeGreaterThan(a.seq);
    expect(await env.store.lastSequence(subject)).toBe(b.seq);
    const read = [];
    for await (const m of env.store.readAfter(subject, 0)) read.push(m.seq);
    expect(read).toEqual([a.seq, b.seq]);
  });

  it('answers a retried message id as a duplicate, not a conflict', async () => {
    await using env = await startBackbone({ projectors: false });
    const subject = 'bc.evt.site.site.s2';
    const first = await env.store.append(subject, { events: [event('cmd-dup-1', 2)] }, { expectedSeq: 0, msgId: 'cmd-dup-1' });
    const again = await env.store.append(subject, { events: [event('cmd-dup-1', 2)] }, { expectedSeq: 0, msgId: 'cmd-dup-1' });
    expect(again).toEqual({ seq: first.seq, duplicate: true });
  });

  it('throws ConcurrencyError when the subject moved past the expected sequence', async () => {
    await using env = await startBackbone({ projectors: false });
    const subject = 'bc.evt.site.site.s3';
    await env.store.append(subject, { events: [event('cmd-c-0001', 3)] }, { expectedSeq: 0, msgId: 'cmd-c-0001' });
    await expect(env.store.append(subject, { events: [event('cmd-c-0002', 3)] }, { expectedSeq: 0, msgId: 'cmd-c-0002' })).rejects.toBeInstanceOf(
      ConcurrencyError,
    );
  });
});
