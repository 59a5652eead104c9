import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from './apiContext.ts';
import type { TokenCheck, TokenInvalidReason } from './authentication.ts';
import { closeWhenSilent } from '../platform/nats/silentConsumer.ts';

/** How often an open stream asks again whether its token still holds (revoked, expired). */
const tokenRecheckMs = 1_000;

export interface LiveStream {
  /** What the stream follows: a stream of the platform and one filter subject on it. */
  readonly stream: string;
  readonly filter: string;
  /** The stream sequence it starts after; the `connected` event says it, so a page reloads no older than that. */
  readonly after: number;
  /** How the service's log names the stream (`event stream`, `node log stream`). */
  readonly label: string;
  /** Written after `connected`, before anything live (a backlog). */
  readonly preamble?: readonly string[];
  /** The SSE frame a message becomes, or undefined to skip it (not the reader's, not written by the platform). */
  readonly frame: (msg: JsMsg) => Promise<string | undefined> | string | undefined;
}

/** One SSE frame: an event with its stream sequence as id, so an EventSource resumes with Last-Event-ID. */
export const sseFrame = (seq: number, event: string, data: unknown): string => `id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Serves a live server-sent-event stream of one filtered subject of a JetStream stream: `connected {seq}` first, then
 * a frame per message. The stream ends, with a last `end` event saying why, within a second or so of its token being
 * revoked or expiring (plain requests answer 401 then, and a stream must not go on delivering); a consumer gone silent
 * ends it too, and the browser's EventSource reconnects with Last-Event-ID and resumes.
 */
export async function serveLiveStream(ctx: ApiContext, tokens: TokenCheck, req: FastifyRequest, reply: FastifyReply, live: LiveStream): Promise<FastifyReply> {
  const consumer = await ctx.store.js.consumers.get(live.stream, {
    filter_subjects: live.filter,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: live.after + 1,
  });
  const messages = await consumer.consume({ max_messages: 256 });
  void closeWhenSilent(messages, (missed) => req.log.warn({ missed }, `${live.label} consumer silent; ending the response`));
  reply.hijack();
  ctx.metrics.liveStreams.inc({ stream: live.label });
  ctx.metrics.liveStreamsOpened.inc({ stream: live.label });
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  reply.raw.write(`: connected\n\nevent: connected\ndata: ${JSON.stringify({ seq: live.after })}\n\n`);
  for (const frame of live.preamble ?? []) reply.raw.write(frame);
  const keepAlive = setInterval(() => reply.raw.write(': keep-alive\n\n'), 15_000);
  const principal = req.principal!;
  let ended: TokenInvalidReason | null = null;
  const recheck = setInterval(() => {
    void tokens.whyInvalid(principal).then(
      (why) => {
        if (!why || ended) return;
        ended = why;
        void messages.close();
      },
      () => undefined,
    );
  }, tokenRecheckMs);
  let stopped = false;
  const stop = () => {
    clearInterval(keepAlive);
    clearInterval(recheck);
    if (!stopped) ctx.metrics.liveStreams.dec({ stream: live.label });
    stopped = true;
  };
  req.raw.once('close', () => {
    stop();
    void messages.close();
  });
  for await (const msg of messages) {
    if (ended) break;
    const frame = await live.frame(msg);
    if (frame !== undefined) reply.raw.write(frame);
  }
  stop();
  if (ended) reply.raw.end(`event: end\ndata: ${JSON.stringify({ code: 'UNAUTHENTICATED', reason: ended })}\n\n`);
  else reply.raw.end();
  return reply;
}
