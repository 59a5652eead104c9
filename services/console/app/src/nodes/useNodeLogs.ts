import { createParser } from 'eventsource-parser';
import { useEffect, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeLogEntry } from '../api/shapes.ts';
import { appendLines } from './nodeLogLines.ts';

const retryMs = 2_000;

export type NodeLogStatus = 'connecting' | 'live' | 'reconnecting';

/**
 * The node's log, live: `GET /v1/nodes/:id/logs?follow=1` read through `fetch` (the bearer token), the newest lines
 * first, then each as it is stored; after a drop it reconnects with Last-Event-ID, so no line is missed or repeated.
 */
export function useNodeLogs(nodeId: string): { lines: NodeLogEntry[]; status: NodeLogStatus } {
  const { client } = useSignedIn();
  const [lines, setLines] = useState<NodeLogEntry[]>([]);
  const [status, setStatus] = useState<NodeLogStatus>('connecting');

  useEffect(() => {
    const controller = new AbortController();
    let lastSeq: number | undefined;
    setLines([]);
    const connectOnce = async () => {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastSeq !== undefined) headers['last-event-id'] = String(lastSeq);
      const res = await client.fetch(`/v1/nodes/${encodeURIComponent(nodeId)}/logs?follow=1`, { headers, signal: controller.signal });
      setStatus('live');
      const parser = createParser({
        onEvent: (message) => {
          if (message.event === 'end') {
            controller.abort();
            client.unauthorized();
            return;
          }
          if (message.event !== 'line') return;
          const line = JSON.parse(message.data) as NodeLogEntry;
          lastSeq = line.seq;
          setLines((held) => appendLines(held, [line]));
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
      while (!controller.signal.aborted) {
        await connectOnce().catch(() => undefined);
        if (controller.signal.aborted) return;
        setStatus('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    })();
    return () => controller.abort();
  }, [client, nodeId]);

  return { lines, status };
}
