import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { Rejection } from '../../../schemas/deadLetters.ts';
import type { Config } from '../config.ts';
import { KEY_BYTES, loadKeyMaterial } from '../keyMaterial.ts';

/** The headers an event batch is authenticated with. The two `Nats-` ones are the server's own, stored with the message. */
export const EventHeaders = {
  mac: 'Bc-Event-Mac',
  messageId: 'Nats-Msg-Id',
  expectedSeq: 'Nats-Expected-Last-Subject-Sequence',
} as const;

const VERSION = 'v1';

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
  readonly #key: Buffer;
  /** Names the key in every MAC (16 hex digits of a hash), so a reader holding another key says so. */
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`the event key must be ${KEY_BYTES} bytes`);
    this.#key = Buffer.from(key);
    this.keyId = createHash('sha256').update('bc.event-mac-id/v1').update(key).digest('hex').slice(0, 16);
  }

  /**
   * The `Nats-Msg-Id` a command's batch is stored under. It is keyed, so nobody without the key can publish a message
   * under the id a genuine command will use later (JetStream would then drop that command as a duplicate); the
   * command id stays readable in front.
   */
  messageId(commandId: string): string {
    return `${commandId}.${createHmac('sha256', this.#key).update('msg-id\n').update(commandId).digest('base64url').slice(0, 22)}`;
  }

  /** The `Bc-Event-Mac` value for a batch about to be appended with these headers. */
  sign(subject: string, messageId: string, expectedSeq: number, payload: Uint8Array): string {
    return `${VERSION}.${this.keyId}.${this.#mac(subject, messageId, String(expectedSeq), payload).toString('base64url')}`;
  }

  /** Why a stored message is not one the event store wrote, or undefined when it is. */
  verify(subject: string, headers: MsgHdrs | undefined, payload: Uint8Array): Rejection | undefined {
    const value = headers?.get(EventHeaders.mac);
    if (!value) return { reason: 'MAC_MISSING', detail: 'no event-store MAC: not written by the event store' };
    const [version, keyId, mac, extra] = value.split('.');
    if (version !== VERSION || !keyId || !mac || extra !== undefined) return { reason: 'MAC_INVALID', detail: 'the MAC header is malformed' };
    if (keyId !== this.keyId) return { reason: 'MAC_INVALID', detail: `MAC under key ${keyId}; this process holds key ${this.keyId}` };
    const messageId = headers!.get(EventHeaders.messageId);
    const expectedSeq = headers!.get(EventHeaders.expectedSeq);
    if (!messageId || !expectedSeq) return { reason: 'MAC_INVALID', detail: 'message id or expected sequence missing' };
    const given = Buffer.from(mac, 'base64url');
    const wanted = this.#mac(subject, messageId, expectedSeq, payload);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      return { reason: 'MAC_INVALID', detail: 'the MAC does not match the message (altered, or copied to another subject or position)' };
    }
    return undefined;
  }

  #mac(subject: string, messageId: string, expectedSeq: string, payload: Uint8Array): Buffer {
    // Header values and subjects cannot hold a line break, so the fields cannot be shifted into one another. (Passing
    // the string itself, not its encoding, halves the cost: measured.)
    return createHmac('sha256', this.#key).update(`bc.event/${VERSION}\n${subject}\n${messageId}\n${expectedSeq}\n`, 'utf8').update(payload).digest();
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
