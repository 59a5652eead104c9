import type { JsMsg } from '@nats-io/jetstream';

/** Where the dots of a reply subject are (a JetStream ack subject has 8 or 11 and more), reused for every message. */
const dots = new Int32Array(16);

/**
 * The stream sequence of a message a JetStream consumer delivered, read from its ack subject as nats.js reads it
 * (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.…`, 9 tokens; or the 12-token form with a domain and an
 * account hash in front of the stream), without `JsMsg.seq`: that parses the whole subject into an object of eleven
 * fields per message, a tenth of a projector's reading of the log for the one number it uses (bench/README.md,
 * issue 34). A message without one, or a subject of any other shape, is left to nats.js (`msg.seq`), which throws as it always has.
 */
export function deliveredStreamSequence(msg: JsMsg): number {
  // nats.js's message has it; its `JsMsg` type does not say so.
  const reply = (msg as { readonly reply?: unknown }).reply;
  if (typeof reply !== 'string') return msg.seq;
  let count = 0;
  for (let at = reply.indexOf('.'); at !== -1 && count < dots.length; at = reply.indexOf('.', at + 1)) dots[count++] = at;
  const tokens = count + 1;
  const index = tokens === 9 ? 5 : tokens >= 11 && count < dots.length ? 7 : -1;
  if (index === -1 || !reply.startsWith('$JS.ACK.')) return msg.seq;
  return parseInt(reply.slice(dots[index - 1]! + 1, dots[index]), 10);
}
