import type { NodeFilter } from '../api/client.ts';
import type { NodeView } from '../api/shapes.ts';

/** Whether `q` is part of the node's id, a MAC, an address or the serial, any case: the API's search (`?q=`), as a test. */
export function matchesSearch(node: NodeView, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (!needle) return true;
  return [node.nodeId, ...node.macs, ...node.addresses, node.inventory?.serial ?? ''].some((text) => text.toLowerCase().includes(needle));
}

/** Whether a node (read again after a live batch) still belongs in a list filtered so. */
export const matchesFilter = (node: NodeView, filter: NodeFilter): boolean =>
  (!filter.siteId || node.siteId === filter.siteId) &&
  (!filter.state || node.state === filter.state) &&
  (!filter.poolId || node.poolId === filter.poolId) &&
  (!filter.tenantId || node.tenantId === filter.tenantId) &&
  matchesSearch(node, filter.q ?? '');
