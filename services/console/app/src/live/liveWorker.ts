import { StreamHub, type TabMessage } from './streamHub.ts';

/**
 * The console's shared worker: one live event stream per token for all the tabs of this origin (`sharedStream.ts`
 * connects them), instead of one per tab, which with HTTP/1.1's 6 connections per host starved a browser with a few
 * tabs open. It reads the stream with the token a tab gave it, as the tab would (bearer header; a 401 ends it).
 */
const hub = new StreamHub((token, unauthorized) => ({
  unauthorized,
  fetch: async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    const res = await fetch(path, { ...init, headers });
    if (res.ok) return res;
    if (res.status === 401) unauthorized();
    throw new Error(`the event stream answered ${res.status}`);
  },
}));

// The DOM library types this file's `self` as a window; in a shared worker it is a SharedWorkerGlobalScope.
const scope = self as unknown as { onconnect: ((event: MessageEvent) => void) | null };
scope.onconnect = (event) => {
  const port = event.ports[0]!;
  port.onmessage = (message: MessageEvent<TabMessage>) => {
    if (message.data.type === 'join') hub.join(port, message.data.token, message.data.path);
    else hub.leave(port);
  };
  // A tab that went without saying so (its process crashed): browsers that tell a port's end leave it too.
  port.addEventListener('close', () => hub.leave(port));
};
