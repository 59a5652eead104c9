import { MsgHdrsImpl } from '@nats-io/nats-core/internal';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { deliveredHeaderBlock, eventHeaderValues } from '../../services/platform/eventStore/eventHeaderValues.ts';
import { EventHeaders } from '../../services/platform/eventStore/eventMac.ts';
import type { RawLogMessage } from '../../services/platform/eventStore/eventStore.ts';

const encoder = new TextEncoder();
const payload = encoder.encode('{"events":[]}');

/** A message in the shape nats.js 3.x delivers to a consumer: header block and payload in one buffer. */
function delivered(block: string, decoded: MsgHdrs): RawLogMessage {
  const head = encoder.encode(block);
  const raw = new Uint8Array(head.length + payload.length);
  raw.set(head);
  raw.set(payload, head.length);
  const msg = { _rdata: raw, _msg: { hdr: head.length } };
  return Object.create(
    {
      get headers() {
        return decoded;
      },
    },
    { msg: { value: msg, enumerable: true }, seq: { value: 1 }, subject: { value: 'bc.evt.x' }, data: { value: raw.subarray(head.length) } },
  ) as RawLogMessage;
}

/** What nats.js's own header getter reads for the four values. */
const viaNats = (h: MsgHdrs) => ({
  mac: h.get(EventHeaders.mac),
  messageId: h.get(EventHeaders.messageId),
  expectedSeq: h.get(EventHeaders.expectedSeq),
  position: h.get(EventHeaders.position),
  state: h.get(EventHeaders.state),
});

describe('eventHeaderValues', () => {
  it('eventHeaderValues reads from the bytes what nats.js reads from its decoded headers, for every shape of header block', () => {
    const blocks = [
      `NATS/1.0\r\nNats-Msg-Id: c-1.abc\r\nNats-Expected-Last-Subject-Sequence: 7\r\nBc-Event-Mac: v1.k.m\r\n\r\n`,
      `NATS/1.0\r\nBc-Event-Position: 3\r\nBc-Event-Mac:   v1.k.m  \r\nNats-Msg-Id: c-é.x\r\nNats-Expected-Last-Subject-Sequence: 0\r\n\r\n`,
      // Repeated: the first counts. Other names, a name that only starts like ours, and case matter.
      `NATS/1.0\r\nBc-Event-Mac: first\r\nBc-Event-Mac: second\r\nX-Other: 1\r\nNats-Msg-Id-Extra: no\r\nnats-msg-id: lower\r\n\r\n`,
      `NATS/1.0\r\nBc-Event-Mac:\r\nBc-Event-Mac: later\r\n\r\n`,
      // A carried state: JSON with colons and spaces, before and after the other headers.
      `NATS/1.0\r\nBc-Event-Position: 2\r\nBc-Aggregate-State: 1 0 {"a": "b: c", "d":[1,2]} \r\nBc-Event-Mac: v1.k.m\r\nBc-Aggregate-State: 2 0 {}\r\n\r\n`,
      `NATS/1.0 503\r\n\r\n`,
      `NATS/1.0\r\nNats-Msg-Id: no-final-break`,
    ];
    for (const block of blocks) {
      const natsHeaders = MsgHdrsImpl.decode(encoder.encode(block));
      const message = delivered(block, natsHeaders);
      expect(deliveredHeaderBlock(message)).toBeDefined();
      expect(eventHeaderValues(message)).toEqual(viaNats(natsHeaders));
    }
  });

  it('eventHeaderValues reads the headers a message object carries itself (a copy with other headers, a direct get)', () => {
    const own = headers();
    own.set(EventHeaders.mac, 'v1.k.own');
    // nats.js keeps the message as an own field, so a spread copy still has the header bytes of the original.
    const copy = { ...delivered(`NATS/1.0\r\nBc-Event-Mac: v1.k.bytes\r\n\r\n`, headers()), seq: 1, subject: 'bc.evt.x', data: payload, headers: own };
    const { headers: ownHeaders, ...withoutOwnHeaders } = copy;
    expect(ownHeaders).toBe(own);
    expect(deliveredHeaderBlock(withoutOwnHeaders as unknown as RawLogMessage)).toBeDefined();
    expect(deliveredHeaderBlock(copy)).toBeUndefined();
    expect(eventHeaderValues(copy)).toEqual({ mac: 'v1.k.own', messageId: '', expectedSeq: '', position: '', state: '' });
    const bare: RawLogMessage = { seq: 1, subject: 'bc.evt.x', data: payload, headers: undefined };
    expect(eventHeaderValues(bare)).toEqual({
      mac: '',
      messageId: '',
      expectedSeq: '',
      position: '',
      state: '',
    });
  });
});
