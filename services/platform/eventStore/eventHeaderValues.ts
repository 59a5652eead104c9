import type { MsgHdrs } from '@nats-io/transport-node';
import { EventHeaders } from './eventMac.ts';

/** The event store's headers of a stored message, `''` for one it lacks. */
export interface EventHeaderValues {
  readonly mac: string;
  readonly messageId: string;
  readonly expectedSeq: string;
  readonly position: string;
  /** The aggregate's state after the message (`Bc-Aggregate-State`), as written: parsed only by a load that uses it. */
  readonly state: string;
}

/** A stored message as any consumer or direct get delivers it (`RawLogMessage`), as far as its headers go. */
export interface HeaderCarrier {
  readonly headers: MsgHdrs | undefined;
}

/** A message as nats.js (3.x) delivers it to a consumer: its header block still as bytes, in front of the payload. */
interface DeliveredShape {
  readonly msg?: { readonly _rdata?: unknown; readonly _msg?: { readonly hdr?: unknown } };
}

const decoder = new TextDecoder();
const MAC = `${EventHeaders.mac}:`;
const MESSAGE_ID = `${EventHeaders.messageId}:`;
const EXPECTED_SEQ = `${EventHeaders.expectedSeq}:`;
const POSITION = `${EventHeaders.position}:`;
const STATE = `${EventHeaders.state}:`;

/**
 * The header block of a message a consumer delivered, or undefined for any other message (a direct get's, one a test
 * built). Read from nats.js's message because its `headers` getter decodes every header into a map of arrays,
 * validating each name and value: that was a tenth of a catch-up's CPU, for four values (bench/README.md, issue 34).
 */
export function deliveredHeaderBlock(message: HeaderCarrier): Uint8Array | undefined {
  // Headers set on the object itself (a copy of a delivered message with other headers) are the ones it carries.
  if (Object.hasOwn(message, 'headers')) return undefined;
  const msg = (message as DeliveredShape).msg;
  const data = msg?._rdata;
  const end = msg?._msg?.hdr;
  return data instanceof Uint8Array && typeof end === 'number' && end > 0 && end <= data.length ? data.subarray(0, end) : undefined;
}

/**
 * The values `decode` needs, read as nats.js reads them (`NATS/1.0` status line, then `Name: value` lines; a name
 * matches exactly, the value is trimmed, the first of repeated headers counts), but straight from the bytes when the
 * message still has them. Whatever is read here is only trusted once the MAC over it verifies.
 */
export function eventHeaderValues(message: HeaderCarrier): EventHeaderValues {
  const block = deliveredHeaderBlock(message);
  if (block === undefined) {
    const h = message.headers;
    return {
      mac: h?.get(EventHeaders.mac) ?? '',
      messageId: h?.get(EventHeaders.messageId) ?? '',
      expectedSeq: h?.get(EventHeaders.expectedSeq) ?? '',
      position: h?.get(EventHeaders.position) ?? '',
      state: h?.get(EventHeaders.state) ?? '',
    };
  }
  const text = decoder.decode(block);
  let mac: string | undefined;
  let messageId: string | undefined;
  let expectedSeq: string | undefined;
  let position: string | undefined;
  let state: string | undefined;
  // The first line is the status line: headers start after it.
  for (let start = text.indexOf('\r\n'); start !== -1 && start < text.length;) {
    start += 2;
    let end = text.indexOf('\r\n', start);
    if (end === -1) end = text.length;
    if (mac === undefined && text.startsWith(MAC, start)) mac = text.slice(start + MAC.length, end).trim();
    else if (messageId === undefined && text.startsWith(MESSAGE_ID, start)) messageId = text.slice(start + MESSAGE_ID.length, end).trim();
    else if (expectedSeq === undefined && text.startsWith(EXPECTED_SEQ, start)) expectedSeq = text.slice(start + EXPECTED_SEQ.length, end).trim();
    else if (position === undefined && text.startsWith(POSITION, start)) position = text.slice(start + POSITION.length, end).trim();
    else if (state === undefined && text.startsWith(STATE, start)) state = text.slice(start + STATE.length, end).trim();
    start = end === text.length ? -1 : end;
  }
  return { mac: mac ?? '', messageId: messageId ?? '', expectedSeq: expectedSeq ?? '', position: position ?? '', state: state ?? '' };
}
