import { fc, test } from '@fast-check/vitest';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { deliveredStreamSequence } from '../../services/platform/nats/deliveredSequence.ts';

// nats.js's own message class, by file: its package exports do not name it.
const { toJsMsg } = createRequire(import.meta.url)(join(import.meta.dirname, '../../node_modules/@nats-io/jetstream/lib/jsmsg.js')) as {
  toJsMsg: (msg: { reply: string }) => JsMsg;
};
const delivered = (reply: string) => toJsMsg({ reply });
const outcome = (read: () => number) => {
  try {
    return read();
  } catch (err) {
    return err instanceof Error ? 'throws' : 'odd';
  }
};

const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const number = fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String));
/** Ack subjects in both of JetStream's forms, and near misses (a token more or less, another prefix). */
const replyArb = fc.oneof(
  fc.tuple(token, token, number, number, number, number, number).map((t) => `$JS.ACK.${t.join('.')}`),
  fc
    .tuple(token, token, token, token, number, number, number, number, number, fc.option(token))
    .map(([...t]) => `$JS.ACK.${t.filter((x) => x !== null).join('.')}`),
  fc.array(fc.oneof(token, number.map(String)), { minLength: 0, maxLength: 18 }).map((t) => `$JS.ACK.${t.join('.')}`),
  fc.array(token, { maxLength: 14 }).map((t) => t.join('.')),
);

describe('deliveredStreamSequence', () => {
  test.prop([replyArb], { numRuns: 2_000 })('deliveredStreamSequence reads the stream sequence nats.js reads, and throws where it throws', (reply) => {
    expect(outcome(() => deliveredStreamSequence(delivered(reply)))).toEqual(outcome(() => delivered(reply).seq));
  });

  it('deliveredStreamSequence reads both forms of an ack subject', () => {
    expect(deliveredStreamSequence(delivered('$JS.ACK.BC_EVENTS.projectors.1.4711.12.1733570000123456789.0'))).toBe(4711);
    expect(deliveredStreamSequence(delivered('$JS.ACK.hub.ACCHASH.BC_EVENTS.projectors.2.4712.13.1733570000123456789.5.rand'))).toBe(4712);
  });
});
