import type { MsgHdrsImpl } from '@nats-io/nats-core/internal';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { AppendHeaders, type AppendHeaderValues } from '../../services/platform/eventStore/appendHeaders.ts';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';

/**
 * The headers as `EventStore.append` built them before `AppendHeaders`: nats.js's `headers()` and `set` for the event
 * store's own, then what `js.publish` adds for `{ msgID, expect: { lastSubjectSequence } }` (its `buildPublishHeaders`).
 */
function viaNats(v: AppendHeaderValues): MsgHdrsImpl {
  const h = headers() as MsgHdrsImpl;
  if (v.position !== undefined) h.set(EventHeaders.position, String(v.position));
  if (v.state) h.set(EventHeaders.state, v.state);
  h.set(EventHeaders.mac, v.mac);
  h.set('Nats-Msg-Id', v.messageId);
  h.set('Nats-Expected-Last-Subject-Sequence', `${v.expectedSeq}`);
  return h;
}

const mac = `v1.0123456789abcdef.${'A'.repeat(43)}`;
const shapes: AppendHeaderValues[] = [
  { position: undefined, state: undefined, mac, messageId: 'cmd-00000001.abcdefghijklmnopqrstuv', expectedSeq: 0 },
  { position: 1, state: undefined, mac, messageId: 'cmd-00000002.abcdefghijklmnopqrstuv', expectedSeq: 0 },
  { position: 7, state: '', mac, messageId: 'cmd-00000003.abcdefghijklmnopqrstuv', expectedSeq: 41 },
  { position: 8, state: '3 @41', mac, messageId: 'idem-x_y-z.abcdefghijklmnopqrstuv', expectedSeq: 52 },
  { position: 9, state: '3 0 {"exists":true,"name":"é ü 雪","instances":{}}', mac, messageId: 'c-9.q', expectedSeq: 1_000_000 },
  // Surrounding spaces: nats.js trims a value, and so does this.
  { position: 2, state: '  3 @5 ', mac, messageId: ' padded-id.x ', expectedSeq: 5 },
];

describe('AppendHeaders', () => {
  it('encodes the bytes nats.js encodes for the same headers set the way append set them, for every shape', () => {
    for (const shape of shapes) {
      const ours = new AppendHeaders(shape);
      const theirs = viaNats(shape);
      expect(Buffer.from(ours.encode()).toString('utf8'), JSON.stringify(shape)).toBe(Buffer.from(theirs.encode()).toString('utf8'));
      expect([...ours.keys()]).toEqual([...theirs.keys()]);
      for (const key of theirs.keys()) expect(ours.get(key)).toBe(theirs.get(key));
    }
  });

  it('encodes what it holds after a header is set, appended or deleted once built, as nats.js does', () => {
    const ours = new AppendHeaders(shapes[3]!);
    const theirs = viaNats(shapes[3]!);
    for (const h of [ours, theirs]) {
      h.set('Nats-Msg-Id', 'other.id');
      h.append('Nats-Trace-Dest', 'x');
      h.delete(EventHeaders.state);
    }
    expect(Buffer.from(ours.encode()).toString('utf8')).toBe(Buffer.from(theirs.encode()).toString('utf8'));
    expect(ours.toString()).toContain('Nats-Msg-Id: other.id');
  });

  it('refuses a value with a line break, which would start a header of its own, as nats.js does', () => {
    const base = shapes[3]!;
    for (const bad of [{ state: '3 @1\r\nNats-Msg-Id: forged' }, { messageId: 'c-1\nx' }, { mac: `${mac}\r` }]) {
      expect(() => viaNats({ ...base, ...bad })).toThrow(/cannot contain/);
      expect(() => new AppendHeaders({ ...base, ...bad })).toThrow(/cannot contain/);
    }
  });
});
