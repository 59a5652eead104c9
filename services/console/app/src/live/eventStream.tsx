import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { ApiClient } from '../api/client.ts';
import type { StoredEvent } from '../api/shapes.ts';
import { followStream, type LiveStatus } from './followStream.ts';
import { followSharedStream } from './sharedStream.ts';

/** One message of `GET /v1/events/stream`: a command's events on one aggregate's subject. */
export interface LiveBatch {
  readonly seq: number;
  readonly subject: string;
  readonly events: readonly StoredEvent[];
}

type Listener = (batch: LiveBatch) => void;

interface LiveEvents {
  readonly status: LiveStatus;
  /**
   * The log position the stream started after, from its last `connected`: what a page loaded before may lack up to
   * there (null until the first one).
   */
  readonly connectedAt: number | null;
  // A property, not a method: `useLiveEvents` takes it off the object (it is a `useCallback`, no `this`).
  readonly subscribe: (listener: Listener) => () => void;
}

const LiveEventsContext = createContext<LiveEvents | null>(null);

/**
 * One server-sent-events connection for the whole browser: the tabs signed in with the same token share it through a
 * shared worker (`sharedStream.ts`; where there is none, each tab reads its own). `EventSource` cannot send a bearer
 * token, so the stream is read through `fetch`. After a drop it reconnects with `Last-Event-ID`, so no batch is
 * missed; what the token may not see the API leaves out; an `end` event (token revoked or expired) returns every tab
 * of the token to sign-in.
 */
export function LiveEventsProvider({ client, children }: { client: ApiClient; children: ReactNode }) {
  const listeners = useRef(new Set<Listener>());
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const [connectedAt, setConnectedAt] = useState<number | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    const path = '/v1/events/stream?subject=bc.evt.>';
    const on = {
      status: setStatus,
      event: (name: string, data: string) => {
        if (name === 'connected') setConnectedAt((JSON.parse(data) as { seq: number }).seq);
        if (name !== 'events') return;
        const batch = JSON.parse(data) as LiveBatch;
        for (const listener of listeners.current) listener(batch);
      },
    };
    const perTab = () => followStream(client, path, controller.signal, on);
    if (!followSharedStream(client, path, controller.signal, on, perTab)) perTab();
    return () => controller.abort();
  }, [client]);

  const subscribe = useCallback((listener: Listener) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);
  const value = useMemo(() => ({ status, connectedAt, subscribe }), [status, connectedAt, subscribe]);
  return <LiveEventsContext.Provider value={value}>{children}</LiveEventsContext.Provider>;
}

function useLive(): LiveEvents {
  const live = useContext(LiveEventsContext);
  if (!live) throw new Error('live events used outside of LiveEventsProvider');
  return live;
}

/** Whether the stream is connected (shown to the user: what they see is live, or catching up). */
export const useLiveStatus = (): LiveStatus => useLive().status;

/** Calls `onBatch` for every new batch of the log the signed-in token may see, for as long as the component lives. */
export function useLiveEvents(onBatch: Listener): void {
  const { subscribe } = useLive();
  const handler = useRef(onBatch);
  handler.current = onBatch;
  useEffect(() => subscribe((batch) => handler.current(batch)), [subscribe]);
}

/**
 * Calls `onConnected` with the log position each time the stream (re)connects after the component mounted. A page
 * loads its data and opens the stream at about the same time: what was stored between the two reaches it only by
 * reading again no older than that position (a workflow cancelled at once had no later event to reload on).
 */
export function useLiveConnected(onConnected: (seq: number) => void): void {
  const { connectedAt } = useLive();
  const handler = useRef(onConnected);
  handler.current = onConnected;
  const seen = useRef(connectedAt);
  useEffect(() => {
    if (connectedAt === null || connectedAt === seen.current) return;
    seen.current = connectedAt;
    handler.current(connectedAt);
  }, [connectedAt]);
}
