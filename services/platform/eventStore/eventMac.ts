import { createHash, hash } from 'node:crypto';
import { join } from 'node:path';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { Config } from '../config.ts';
import { KEY_BYTES, loadKeyMaterial } from '../keyMaterial.ts';

/**
 * The headers an event batch is authenticated with. The two `Nats-` ones are the server's own, stored with the message.
 * `position` (how many messages its subject holds with this one) is written since the cold-load walk back; a message
 * without it (older) is verified as before. `state` (the aggregate's folded state after this message, for a one-get
 * cold load: `services/platform/commands/aggregateState.ts`) is written with a position only, and covered by the MAC
 * like the rest, so a reader trusts it exactly as far as the events beside it.
 */
export const EventHeaders = {
  mac: 'Bc-Event-Mac',
  messageId: 'Nats-Msg-Id',
  expectedSeq: 'Nats-Expected-Last-Subject-Sequence',
  position: 'Bc-Event-Position',
  state: 'Bc-Aggregate-State',
} as const;

const VERSION = 'v1';
/** Bytes of an HMAC-SHA256, and characters of its base64url form (no padding). */
const MAC_BYTES = 32;
const MAC_CHARS = 43;
/** SHA-256's block size: HMAC's key pads are one block long. */
const BLOCK_BYTES = 64;
/** A message whose MAC input is longer than this is hashed in a buffer of its own rather than the reused one. */
const REUSED_INPUT_BYTES = 64 * 1024;
const noBytes = new Uint8Array(0);

/**
 * The control plane's key for event batches: only a process holding it can write something readers accept on
 * `bc.evt.>`. The MAC covers the subject, the message id, the expected last subject sequence and the payload.
 *
 * Covering the expected sequence is what stops a replay: JetStream refused the append unless the subject's last
 * message was exactly that sequence, and it stores the header with the message. A copy of a genuine batch published
 * again must carry the same expectation (else its MAC fails), which the server refuses, since the original now sits
 * after that sequence. Messages stay verifiable forever: a reader needs nothing but the key and the stored message.
 */
export class EventMac {
  /** Names the key in every MAC (16 hex digits of a hash), so a reader holding another key says so. */
  readonly keyId: string;
  /** What every MAC under this key starts with: a header that does is split without allocating its parts. */
  readonly #prefix: string;

  /**
   * HMAC-SHA256 as RFC 2104 builds it, with two one-shot `hash` calls instead of an `Hmac` object per message: the
   * inner pad sits at the head of a reused input buffer (the fields and payload are written after it), the outer pad
   * at the head of a reused buffer the inner digest is written after. `createHmac` made a native object per message
   * whose set-up and collection were most of a catch-up's MAC cost (bench/README.md, issue 34), and of an append's
   * message id; a test checks both against `createHmac` for every shape of message. Both digests come back as strings
   * (the inner one as `binary`, written into the outer buffer; the MAC as base64url, compared with the header's
   * characters): a digest returned as a `Buffer` cost a backing store per hash, three times a short string's price
   * with its collection.
   */
  readonly #inner = Buffer.alloc(BLOCK_BYTES + REUSED_INPUT_BYTES);
  readonly #outer = Buffer.alloc(BLOCK_BYTES + MAC_BYTES);
  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`the event key must be ${KEY_BYTES} bytes`);
    // A 32-byte key is shorter than a block: HMAC pads it with zeros, so each pad is the key XOR the pad byte, then it.
    this.#inner.fill(0x36, 0, BLOCK_BYTES);
    this.#outer.fill(0x5c, 0, BLOCK_BYTES);
    for (let i = 0; i < key.length; i++) {
      this.#inner[i]! ^= key[i]!;
      this.#outer[i]! ^= key[i]!;
    }
    this.keyId = createHash('sha256').update('bc.event-mac-id/v1').update(key).digest('hex').slice(0, 16);
    this.#prefix = `${VERSION}.${this.keyId}.`;
  }

  /**
   * The `Nats-Msg-Id` a command's batch is stored under. It is keyed, so nobody without the key can publish a message
   * under the id a genuine command will use later (JetStream would then drop that command as a duplicate); the
   * command id stays readable in front.
   */
  messageId(commandId: string): string {
    return `${commandId}.${this.#hmac(`msg-id\n${commandId}`, noBytes).slice(0, 22)}`;
  }

  /** The `Bc-Event-Mac` value for a batch about to be appended with these headers (`position` and `state` when it has them). */
  sign(subject: string, messageId: string, expectedSeq: number, payload: Uint8Array, position?: number, state = ''): string {
    if (state !== '' && position === undefined) throw new Error('an aggregate state is written with a position only');
    return `${this.#prefix}${this.#mac(subject, messageId, String(expectedSeq), position === undefined ? '' : String(position), state, payload)}`;
  }

  /** Why a stored message is not one the event store wrote, or undefined when it is. */
  verify(subject: string, headers: MsgHdrs | undefined, payload: Uint8Array): Rejection | undefined {
    const value = headers?.get(EventHeaders.mac);
    if (!value) return { reason: 'MAC_MISSING', detail: 'no event-store MAC: not written by the event store' };
    const { messageId, expectedSeq, position, state } = EventHeaders;
    return this.verifyValues(subject, value, headers!.get(messageId), headers!.get(expectedSeq), payload, headers!.get(position), headers!.get(state));
  }

  /**
   * `verify` on header values the caller read already (`''` for a header the message lacks). The MAC is compared as
   * the text the writer wrote (canonical base64url: another spelling of the same bytes is refused), every character
   * whatever the first difference, so the time taken tells nothing about how much of a forgery was right.
   */
  verifyValues(subject: string, value: string, messageId: string, expectedSeq: string, payload: Uint8Array, position = '', state = ''): Rejection | undefined {
    if (!value) return { reason: 'MAC_MISSING', detail: 'no event-store MAC: not written by the event store' };
    const start = this.#prefix.length;
    if (value.length !== start + MAC_CHARS || !value.startsWith(this.#prefix)) return this.#malformed(value);
    if (!messageId || !expectedSeq) return { reason: 'MAC_INVALID', detail: 'message id or expected sequence missing' };
    if (state !== '' && position === '') return { reason: 'MAC_INVALID', detail: 'an aggregate state without a position' };
    const wanted = this.#mac(subject, messageId, expectedSeq, position, state, payload);
    let differs = 0;
    for (let i = 0; i < MAC_CHARS; i++) differs |= value.charCodeAt(start + i) ^ wanted.charCodeAt(i);
    if (differs !== 0) return { reason: 'MAC_INVALID', detail: 'the MAC does not match the message (altered, or copied to another subject or position)' };
    return undefined;
  }

  /** Why a MAC header that is not `v1.<this key>.<43 characters>` is refused (the slow path: only forgeries take it). */
  #malformed(value: string): Rejection {
    const [version, keyId, mac, extra] = value.split('.');
    if (version !== VERSION || !keyId || !mac || extra !== undefined) return { reason: 'MAC_INVALID', detail: 'the MAC header is malformed' };
    if (keyId !== this.keyId) return { reason: 'MAC_INVALID', detail: `MAC under key ${keyId}; this process holds key ${this.keyId}` };
    return { reason: 'MAC_INVALID', detail: 'the MAC does not match the message (altered, or copied to another subject or position)' };
  }

  /** The HMAC-SHA256 of a message's fields and payload, in base64url without padding (`MAC_CHARS` characters). */
  #mac(subject: string, messageId: string, expectedSeq: string, position: string, state: string, payload: Uint8Array): string {
    // Header values and subjects cannot hold a line break, so the fields cannot be shifted into one another (the state,
    // the longest, also goes with its length). A message with a position, or with a position and a state, is signed
    // under a tag of its own, so neither can be removed from or added to a message signed without it: older messages
    // verify unchanged.
    const fields =
      position === ''
        ? `bc.event/${VERSION}\n${subject}\n${messageId}\n${expectedSeq}\n`
        : state === ''
          ? `bc.event/${VERSION}+position\n${subject}\n${messageId}\n${expectedSeq}\n${position}\n`
          : `bc.event/${VERSION}+position+state\n${subject}\n${messageId}\n${expectedSeq}\n${position}\n${state.length}\n${state}\n`;
    return this.#hmac(fields, payload);
  }

  /** HMAC-SHA256 under this key of `text` (UTF-8) followed by `payload`, in base64url without padding. */
  #hmac(fields: string, payload: Uint8Array): string {
    let input = this.#inner;
    // At most 3 bytes of UTF-8 per UTF-16 unit: a bound that needs no pass over the string.
    if (3 * fields.length + payload.length > REUSED_INPUT_BYTES) {
      input = Buffer.allocUnsafe(BLOCK_BYTES + 3 * fields.length + payload.length);
      this.#inner.copy(input, 0, 0, BLOCK_BYTES);
    }
    const end = BLOCK_BYTES + input.write(fields, BLOCK_BYTES, 'utf8');
    input.set(payload, end);
    this.#outer.write(hash('sha256', input.subarray(0, end + payload.length), 'binary'), BLOCK_BYTES, 'binary');
    return hash('sha256', this.#outer, 'base64url');
  }
}

/**
 * The control plane's event key: `BC_EVENT_KEY` (base64) when set, else the key file (`BC_EVENT_KEY_FILE`, default
 * `<dataDir>/event.key`), created with a random key and mode 0600 when missing. It is a key of its own, not the
 * master key: processes that only read or write events (projectors, the orchestrator, plugins) never hold what
 * opens secrets. It must be kept with the event stream: a log whose key is lost can no longer be read.
 */
export function loadEventMac(config: Pick<Config, 'dataDir' | 'eventKey' | 'eventKeyFile'>): EventMac {
  const file = config.eventKeyFile ?? join(config.dataDir, 'event.key');
  return new EventMac(loadKeyMaterial({ value: config.eventKey, valueName: 'BC_EVENT_KEY', file, code: 'EVENT_KEY_INVALID' }));
}
