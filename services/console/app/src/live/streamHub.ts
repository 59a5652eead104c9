import { followStream, type LiveStatus, type StreamSource } from './followStream.ts';

/** What a tab asks of the shared worker: to follow a stream with its token, or to stop. */
export type TabMessage = { readonly type: 'join'; readonly token: string; readonly path: string } | { readonly type: 'leave' };

/** What the shared worker tells a tab: the stream's status, one of its events, or its end (back to sign-in). */
export type HubMessage =
  | { readonly type: 'status'; readonly status: LiveStatus }
  | { readonly type: 'event'; readonly name: string; readonly data: string }
  | { readonly type: 'end' };

/** A tab, as the hub sees it (a `MessagePort` in the worker). */
export interface TabPort {
  postMessage(message: HubMessage): void;
}

interface SharedStream {
  readonly key: string;
  readonly tabs: Set<TabPort>;
  readonly controller: AbortController;
  status: LiveStatus;
  /**
   * The log position the stream's tabs are current to: its last `connected`, or the last batch after it (null before
   * the first `connected`). A tab that joins later is told it as its `connected`: it reads its pages no older than
   * that, and every batch after it reaches it live, so nothing falls in between.
   */
  position: number | null;
}

/**
 * One live stream per token (and path) for every tab of a browser that follows it: the first tab opens it, later tabs
 * join it and are told where it stands, the last one to leave closes it. Tabs of different tokens never share one
 * (the API filters a stream by what its token may see). The stream's end (token revoked or expired) goes to every
 * tab of it.
 */
export class StreamHub {
  readonly #streams = new Map<string, SharedStream>();
  readonly #joined = new Map<TabPort, SharedStream>();

  constructor(private readonly sourceFor: (token: string, unauthorized: () => void) => StreamSource) {}

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  join(tab: TabPort, token: string, path: string): void {
    const key = JSON.stringify([token, path]);
    // Joining again what it follows (shown from the back-forward cache) must not close the stream under its tabs.
    if (this.#joined.get(tab)?.key !== key) this.leave(tab);
    const stream = this.#streams.get(key) ?? this.#open(key, token, path);
    stream.tabs.add(tab);
    this.#joined.set(tab, stream);
    tab.postMessage({ type: 'status', status: stream.status });
    if (stream.position !== null) tab.postMessage({ type: 'event', name: 'connected', data: JSON.stringify({ seq: stream.position }) });
  }

  leave(tab: TabPort): void {
    const stream = this.#joined.get(tab);
    if (!stream) return;
    this.#joined.delete(tab);
    stream.tabs.delete(tab);
    if (stream.tabs.size === 0) this.#close(stream);
  }

  #open(key: string, token: string, path: string): SharedStream {
    const stream: SharedStream = { key, tabs: new Set(), controller: new AbortController(), status: 'connecting', position: null };
    this.#streams.set(key, stream);
    const tell = (message: HubMessage) => {
      for (const tab of stream.tabs) tab.postMessage(message);
    };
    const ended = () => {
      tell({ type: 'end' });
      for (const tab of stream.tabs) this.#joined.delete(tab);
      stream.tabs.clear();
      this.#close(stream);
    };
    followStream(this.sourceFor(token, ended), path, stream.controller.signal, {
      status: (status) => {
        stream.status = status;
        tell({ type: 'status', status });
      },
      event: (name, data) => {
        if (name === 'connected' || name === 'events') stream.position = (JSON.parse(data) as { seq: number }).seq;
        tell({ type: 'event', name, data });
      },
    });
    return stream;
  }

  #close(stream: SharedStream): void {
    if (this.#streams.get(stream.key) === stream) this.#streams.delete(stream.key);
    stream.controller.abort();
  }
}
