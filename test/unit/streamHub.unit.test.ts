import { describe, expect, it } from 'vitest';
import type { StreamSource } from '../../services/console/app/src/live/followStream.ts';
import { StreamHub, type HubMessage, type TabPort } from '../../services/console/app/src/live/streamHub.ts';

/** An API whose event stream the test writes into: each fetch is one connection, kept with its token and abort signal. */
function fakeApi() {
  const connections: { token: string; write: (frame: string) => void; signal: AbortSignal }[] = [];
  const sourceFor = (token: string, unauthorized: () => void): StreamSource => ({
    unauthorized,
    fetch: async (_path: string, init: RequestInit = {}) => {
      let write!: (frame: string) => void;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          write = (frame) => controller.enqueue(new TextEncoder().encode(frame));
          init.signal?.addEventListener('abort', () => controller.error(new Error('aborted')));
        },
      });
      connections.push({ token, write, signal: init.signal! });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return { connections, sourceFor };
}

function tab(): TabPort & { seen: HubMessage[] } {
  const seen: HubMessage[] = [];
  return { seen, postMessage: (m) => void seen.push(m) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
const batch = (seq: number) => `id: ${seq}\nevent: events\ndata: ${JSON.stringify({ seq, subject: 'bc.evt.metal.node.n1', events: [] })}\n\n`;
const events = (t: { seen: HubMessage[] }) => t.seen.flatMap((m) => (m.type === 'event' ? [`${m.name} ${(JSON.parse(m.data) as { seq: number }).seq}`] : []));

describe('StreamHub (the console shared worker)', () => {
  it('opens one stream per token for every tab, tells a late tab where it stands, and closes with the last tab', async () => {
    const api = fakeApi();
    const hub = new StreamHub(api.sourceFor);
    const [a, b, c, other] = [tab(), tab(), tab(), tab()];
    hub.join(a, 'tok-1', '/v1/events/stream');
    hub.join(b, 'tok-1', '/v1/events/stream');
    await settle();
    expect(api.connections.map((x) => x.token)).toEqual(['tok-1']);
    api.connections[0]!.write(`event: connected\ndata: {"seq":40}\n\n`);
    api.connections[0]!.write(batch(41));
    await settle();
    expect(events(a)).toEqual(['connected 40', 'events 41']);
    expect(events(b)).toEqual(['connected 40', 'events 41']);
    // A tab joining after batch 41 reads its pages no older than 41, and gets every batch after it live.
    hub.join(c, 'tok-1', '/v1/events/stream');
    api.connections[0]!.write(batch(42));
    await settle();
    expect(events(c)).toEqual(['connected 41', 'events 42']);
    expect(c.seen[0]).toEqual({ type: 'status', status: 'live' });
    // Another token never shares it.
    hub.join(other, 'tok-2', '/v1/events/stream');
    await settle();
    expect(api.connections.map((x) => x.token)).toEqual(['tok-1', 'tok-2']);
    expect(events(other)).toEqual([]);
    expect(hub.size).toBe(2);

    // Joining again what it follows (a page shown from the back-forward cache) opens nothing new.
    hub.join(a, 'tok-1', '/v1/events/stream');
    expect(api.connections).toHaveLength(2);
    expect(a.seen.at(-1)).toEqual({ type: 'event', name: 'connected', data: JSON.stringify({ seq: 42 }) });
    hub.leave(a);
    hub.leave(b);
    expect(api.connections[0]!.signal.aborted).toBe(false);
    hub.leave(c);
    expect(api.connections[0]!.signal.aborted).toBe(true);
    expect(hub.size).toBe(1);
  });

  it("sends the stream's end (token revoked) to every tab of that token alone, and opens a new one for a tab that comes after", async () => {
    const api = fakeApi();
    const hub = new StreamHub(api.sourceFor);
    const [a, b, other] = [tab(), tab(), tab()];
    hub.join(a, 'tok-1', '/s');
    hub.join(b, 'tok-1', '/s');
    hub.join(other, 'tok-2', '/s');
    await settle();
    api.connections[0]!.write(`event: end\ndata: {"code":"UNAUTHENTICATED","reason":"revoked"}\n\n`);
    await settle();
    expect(a.seen.at(-1)).toEqual({ type: 'end' });
    expect(b.seen.at(-1)).toEqual({ type: 'end' });
    expect(other.seen.some((m) => m.type === 'end')).toBe(false);
    expect(api.connections[0]!.signal.aborted).toBe(true);
    expect(hub.size).toBe(1);
    hub.join(a, 'tok-1', '/s');
    await settle();
    expect(api.connections).toHaveLength(3);
  });
});
