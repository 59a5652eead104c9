import type { ApiClient } from '../api/client.ts';
import type { LiveStatus } from './followStream.ts';
import type { HubMessage, TabMessage } from './streamHub.ts';

/**
 * Follows `path` through the console's shared worker (`liveWorker.ts`): the tabs of this browser signed in with the
 * same token share one connection to the API. Leaves it when `signal` aborts and while the page is hidden away
 * (`pagehide`: closed, navigated from, or put in the back-forward cache; it joins again if shown from there), so the
 * last tab to go closes the connection. Returns false where the browser has no `SharedWorker` (the caller then
 * follows the stream itself); `perTab` is also what a worker that fails to start falls back to.
 */
export function followSharedStream(
  client: ApiClient,
  path: string,
  signal: AbortSignal,
  on: { status: (status: LiveStatus) => void; event: (name: string, data: string) => void },
  perTab: () => void,
): boolean {
  if (typeof SharedWorker === 'undefined') return false;
  let worker: SharedWorker;
  try {
    worker = new SharedWorker(new URL('./liveWorker.ts', import.meta.url), { type: 'module', name: 'bc-live-events' });
  } catch {
    return false;
  }
  const port = worker.port;
  let heard = false;
  const send = (message: TabMessage) => port.postMessage(message);
  port.onmessage = (message: MessageEvent<HubMessage>) => {
    heard = true;
    const m = message.data;
    if (m.type === 'status') on.status(m.status);
    else if (m.type === 'event') on.event(m.name, m.data);
    else client.unauthorized();
  };
  worker.onerror = () => {
    if (!heard && !signal.aborted) perTab();
  };
  const join = () => send({ type: 'join', token: client.token, path });
  const leave = () => send({ type: 'leave' });
  const shown = (event: PageTransitionEvent) => {
    if (event.persisted) join();
  };
  addEventListener('pagehide', leave);
  addEventListener('pageshow', shown);
  join();
  signal.addEventListener(
    'abort',
    () => {
      removeEventListener('pagehide', leave);
      removeEventListener('pageshow', shown);
      leave();
      port.close();
    },
    { once: true },
  );
  return true;
}
