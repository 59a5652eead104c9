import { useEffect, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeLogEntry } from '../api/shapes.ts';
import type { LiveStatus } from '../live/followStream.ts';
import { appendLines } from './nodeLogLines.ts';

/** How often a visible node page reads the lines stored since its last read. */
export const NODE_LOG_POLL_MS = 1_000;

/**
 * The node's log, kept current by reading `GET /v1/nodes/:id/logs?since=<last seq>` every second while the tab is
 * visible: the newest lines first, then each line once, in order. Not the API's `follow=1` stream: a browser keeps 6
 * HTTP/1.1 connections per server, the console's event stream holds one per tab, and a second per node page would
 * leave a few open node pages nothing to load the next page with.
 */
export function useNodeLogs(nodeId: string): { lines: NodeLogEntry[]; status: LiveStatus } {
  const { client } = useSignedIn();
  const [lines, setLines] = useState<NodeLogEntry[]>([]);
  const [status, setStatus] = useState<LiveStatus>('connecting');

  useEffect(() => {
    const controller = new AbortController();
    let since: number | undefined;
    setLines([]);
    void (async () => {
      while (!controller.signal.aborted) {
        if (document.visibilityState === 'visible') {
          try {
            const page = await client.nodeLogs(nodeId, since, controller.signal);
            since = page.lastSeq;
            setLines((held) => appendLines(held, page.items));
            setStatus('live');
          } catch {
            if (controller.signal.aborted) return;
            setStatus('reconnecting');
          }
        }
        await new Promise((resolve) => setTimeout(resolve, NODE_LOG_POLL_MS));
      }
    })();
    return () => controller.abort();
  }, [client, nodeId]);

  return { lines, status };
}
