import type { NodeFilter } from '../api/client.ts';
import type { NodeRowView } from '../api/shapes.ts';

/** Whether `q` is part of the node's id, a MAC, an address or the serial, any case: the API's search (`?q=`), as a test. */
export function matchesSearch(node: NodeRowView, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (!needle) return true;
  return [node.nodeId, ...node.macs, ...node.addresses, node.serial ?? ''].some((text) => text.toLowerCase().includes(needle));
}

/** Whether a node (read again after a live batch) still belongs in a list filtered so. */
export const matchesFilter = (node: NodeRowView, filter: NodeFilter): boolean =>
  (!filter.siteId || node.siteId === filter.siteId) &&
  (!filter.state || node.state === filter.state) &&
  (!filter.poolId || node.poolId === filter.poolId) &&
  (!filter.tenantId || node.tenantId === filter.tenantId) &&
  matchesSearch(node, filter.q ?? '');

const exactKeys = ['siteId', 'state', 'poolId', 'tenantId'] as const;

/**
 * Whether every node `next` selects is among those `base` selects: each of base's fields is unset or the same in next,
 * and next's search contains base's (a text containing the longer needle contains the shorter). A complete list read
 * for `base` can then be narrowed here instead of read again from the API.
 */
export function refinesFilter(next: NodeFilter, base: NodeFilter): boolean {
  const needle = (q: string | undefined) => (q ?? '').trim().toLowerCase();
  return exactKeys.every((k) => !base[k] || base[k] === next[k]) && needle(next.q).includes(needle(base.q));
}
