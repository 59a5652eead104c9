import { InvalidArgumentError, MsgHdrsImpl } from '@nats-io/nats-core/internal';
import { EventHeaders } from './eventMac.ts';

/** What one append stores besides its payload: the event store's headers and JetStream's two (`EventHeaders`). */
export interface AppendHeaderValues {
  readonly position: number | undefined;
  readonly state: string | undefined;
  readonly mac: string;
  readonly messageId: string;
  readonly expectedSeq: number;
}

const LINE_BREAK = /[\r\n]/;

/** A header value as nats.js's `MsgHdrs.set` stores it: refused with a line break (it would start another header), trimmed. */
function valueOf(value: string): string {
  if (LINE_BREAK.test(value)) throw InvalidArgumentError.format('header', 'values cannot contain \\r or \\n');
  return value.trim();
}

/**
 * An append's headers, as nats.js's `headers()` + `set` + `js.publish({ msgID, expect })` built them (the same names,
 * order, values and bytes on the wire; `get` and the rest of `MsgHdrs` answer the same), without the per-header work
 * that costs for names known to be canonical: `set` canonicalised each name (a `String.fromCharCode` of its
 * characters), looked it up twice, and the block was encoded by `TextEncoder` (several times `Buffer.from`'s price for
 * a few hundred bytes). That was a tenth of an append's CPU in the bench process (bench/README.md, issue 34). Values
 * are still checked for line breaks and trimmed as `set` does.
 */
export class AppendHeaders extends MsgHdrsImpl {
  constructor(values: AppendHeaderValues) {
    super();
    // The order `EventStore.append` set them in, then the two `js.publish` adds for `msgID` and `expect`.
    if (values.position !== undefined) this.headers.set(EventHeaders.position, [String(values.position)]);
    if (values.state) this.headers.set(EventHeaders.state, [valueOf(values.state)]);
    this.headers.set(EventHeaders.mac, [valueOf(values.mac)]);
    this.headers.set(EventHeaders.messageId, [valueOf(values.messageId)]);
    this.headers.set(EventHeaders.expectedSeq, [String(values.expectedSeq)]);
  }

  override encode(): Uint8Array {
    return Buffer.from(this.toString());
  }
}
