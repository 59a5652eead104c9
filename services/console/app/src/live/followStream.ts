import { createParser } from 'eventsource-parser';
import type { ApiClient } from '../api/client.ts';

/**
 * Where a stream is read from: the signed-in `ApiClient` in a tab, or the shared worker's own fetch with the token
 * (`liveWorker.ts`). `unauthorized` is called when the token no longer holds.
 */
export type StreamSource = Pick<ApiClient, 'fetch' | 'unauthorized'>;

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

const retryMs = 2_000;

/**
 * Follows one of the API's server-sent-event streams until `signal` aborts, through `fetch` (`EventSource` cannot send
 * a bearer token). Each frame's id is a stream sequence: after a drop it reconnects with `Last-Event-ID`, so nothing
 * is missed or repeated. An `end` frame (token revoked or expired) returns the user to sign-in at once, not at the
 * next click.
 */
export function followStream(
  client: StreamSource,
  path: string,
  signal: AbortSignal,
  on: { status: (status: LiveStatus) => void; event: (name: string, data: string) => void },
): void {
  let lastId: string | undefined;
  let ended = false;
  const connectOnce = async () => {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    const res = await client.fetch(path, { headers, signal });
    on.status('live');
    const parser = createParser({
      onEvent: (message) => {
        if (message.event === 'end') {
          ended = true;
          client.unauthorized();
          return;
        }
        if (message.id) lastId = message.id;
        on.event(message.event ?? 'message', message.data);
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  };
  void (async () => {
    while (!signal.aborted && !ended) {
      await connectOnce().catch(() => undefined);
      if (signal.aborted || ended) return;
      on.status('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  })();
}
