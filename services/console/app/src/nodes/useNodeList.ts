import { useEffect, useRef, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import { ApiError, type NodeFilter } from '../api/client.ts';
import { nodeRowOf } from '../../../../../schemas/metal/nodeRow.ts';
import type { NodeRowView } from '../api/shapes.ts';
import { useLiveEvents } from '../live/eventStream.tsx';
import { nodesChangedBy } from '../live/nodeChanges.ts';
import { matchesFilter, refinesFilter } from './nodeMatches.ts';

const pageSize = 500;
/** Node batches arrive in bursts during a fleet deploy: changed nodes are re-read together, this often at most. */
const refreshEveryMs = 300;

/**
 * Every node the filter selects, read page by page through the API's cursor (the table shows the first page at once),
 * then kept current: a node whose batch appears on the live stream is read again, and dropped if it no longer matches.
 * A filter that narrows a list already read in full (a site chosen after "any site", a longer search) is applied to
 * that list instead of read again: it is as current as the live stream keeps it, and at 10,000 nodes a re-read is
 * megabytes. A widening filter reads again, since the nodes left out were not kept current.
 */
export function useNodeList(filter: NodeFilter): { nodes: ReadonlyMap<string, NodeRowView>; complete: boolean; error: ApiError | undefined } {
  const { client } = useSignedIn();
  const [nodes, setNodes] = useState<ReadonlyMap<string, NodeRowView>>(new Map());
  const [complete, setComplete] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const key = JSON.stringify(filter);
  const changed = useRef(new Map<string, number>());
  // A node re-read may answer after the filter changed: it is matched against the filter of the moment it lands.
  const currentFilter = useRef(filter);
  currentFilter.current = filter;
  /** The filter of the list as it stands once it was read in full, and whose token read it. */
  const readInFull = useRef<{ filter: NodeFilter; client: typeof client } | undefined>(undefined);

  useEffect(() => {
    const base = readInFull.current;
    setError(undefined);
    if (base?.client === client && refinesFilter(filter, base.filter)) {
      readInFull.current = { filter, client };
      setNodes((prev) => new Map([...prev].filter(([, node]) => matchesFilter(node, filter))));
      return;
    }
    const controller = new AbortController();
    readInFull.current = undefined;
    setNodes(new Map());
    setComplete(false);
    void (async () => {
      let cursor: string | null = null;
      do {
        const page = await client.nodeRows({ ...filter, cursor, limit: pageSize }, controller.signal);
        setNodes((prev) => new Map([...prev, ...page.items.map((n) => [n.nodeId, n] as const)]));
        cursor = page.nextCursor;
      } while (cursor && !controller.signal.aborted);
      if (controller.signal.aborted) return;
      readInFull.current = { filter, client };
      setComplete(true);
    })().catch((err: unknown) => !controller.signal.aborted && setError(err as ApiError));
    return () => controller.abort();
    // `key` is the filter's value: a new object with the same filter reads nothing again.
  }, [client, key]);

  useEffect(() => {
    const timer = setInterval(() => {
      if (changed.current.size === 0) return;
      const batch = [...changed.current];
      changed.current.clear();
      for (const [nodeId, seq] of batch) {
        client.node(nodeId, seq).then(
          (view) => {
            const node = nodeRowOf(view);
            setNodes((prev) => withNode(prev, nodeId, matchesFilter(node, currentFilter.current) ? node : undefined));
          },
          (err: unknown) => err instanceof ApiError && err.code === 'NOT_FOUND' && setNodes((prev) => withNode(prev, nodeId, undefined)),
        );
      }
    }, refreshEveryMs);
    return () => clearInterval(timer);
  }, [client, key]);

  const shown = useRef(nodes);
  shown.current = nodes;
  useLiveEvents((batch) => {
    for (const nodeId of nodesChangedBy(batch, shown.current.values())) changed.current.set(nodeId, batch.seq);
  });

  return { nodes, complete, error };
}

function withNode(nodes: ReadonlyMap<string, NodeRowView>, nodeId: string, node: NodeRowView | undefined): ReadonlyMap<string, NodeRowView> {
  if (!node && !nodes.has(nodeId)) return nodes;
  const next = new Map(nodes);
  if (node) next.set(nodeId, node);
  else next.delete(nodeId);
  return next;
}
