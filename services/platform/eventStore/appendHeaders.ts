import { InvalidArgumentError, MsgHdrsImpl, type Match } from '@nats-io/nats-core/internal';
import { EventHeaders } from './eventMac.ts';

/** What one append stores besides its payload: the event store's headers and JetStream's two (`EventHeaders`). */
export interface AppendHeaderValues {
  readonly position: number | undefined;
  readonly state: string | undefined;
  readonly mac: string;
  readonly messageId: string;
  readonly expectedSeq: number;
}

const LF = 10;
const CR = 13;

/**
 * A header value as nats.js's `MsgHdrs.set` stores it: refused with a line break (it would start another header),
 * trimmed. A loop over the characters, not `set`'s regular expression: the same answer at a fraction of the price.
 */
function valueOf(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === LF || c === CR) throw InvalidArgumentError.format('header', 'values cannot contain \\r or \\n');
  }
  return value.trim();
}

/**
 * An append's headers, as nats.js's `headers()` + `set` + `js.publish({ msgID, expect })` built them (the same names,
 * order, values and bytes on the wire; `get` and the rest of `MsgHdrs` answer the same), without the per-header work
 * that costs for names known to be canonical: `set` canonicalised each name (a `String.fromCharCode` of its
 * characters), looked it up twice, and the block was encoded by `TextEncoder` (several times `Buffer.from`'s price for
 * a few hundred bytes). That was a tenth of an append's CPU in the bench process (bench/README.md, issue 34). Values
 * are still checked for line breaks and trimmed as `set` does. The block is written as one string when built, not
 * by `toString`'s header-by-header concatenation when encoded (a string per header, flattened again by the encoder).
 */
export class AppendHeaders extends MsgHdrsImpl {
  /** The encoded block's text, until a header is changed after construction (then `toString` builds it again). */
  #block: string | undefined;

  constructor(values: AppendHeaderValues) {
    super();
    // The order `EventStore.append` set them in, then the two `js.publish` adds for `msgID` and `expect`.
    const position = values.position === undefined ? undefined : String(values.position);
    const state = values.state ? valueOf(values.state) : undefined;
    const mac = valueOf(values.mac);
    const messageId = valueOf(values.messageId);
    const expectedSeq = String(values.expectedSeq);
    if (position !== undefined) this.headers.set(EventHeaders.position, [position]);
    if (state !== undefined) this.headers.set(EventHeaders.state, [state]);
    this.headers.set(EventHeaders.mac, [mac]);
    this.headers.set(EventHeaders.messageId, [messageId]);
    this.headers.set(EventHeaders.expectedSeq, [expectedSeq]);
    this.#block =
      `NATS/1.0${position === undefined ? '' : `\r\n${EventHeaders.position}: ${position}`}` +
      `${state === undefined ? '' : `\r\n${EventHeaders.state}: ${state}`}\r\n${EventHeaders.mac}: ${mac}` +
      `\r\n${EventHeaders.messageId}: ${messageId}\r\n${EventHeaders.expectedSeq}: ${expectedSeq}\r\n\r\n`;
  }

  override append(k: string, v: string, match?: Match): void {
    this.#block = undefined;
    super.append(k, v, match);
  }

  override delete(k: string, match?: Match): void {
    this.#block = undefined;
    super.delete(k, match);
  }

  override toString(): string {
    return this.#block ?? super.toString();
  }

  override encode(): Uint8Array {
    return Buffer.from(this.toString());
  }
}
