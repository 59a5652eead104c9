import type { NodeRowView, NodeView } from './views.ts';

/**
 * A node's full view as a row of the node list. Its own file, importing the views' types alone, because the web
 * console runs it on each node it re-reads, and the views' module reaches schemas that use Node's crypto.
 */
export const nodeRowOf = (view: NodeView): NodeRowView => ({
  nodeId: view.nodeId,
  siteId: view.siteId,
  state: view.state,
  maintenance: view.maintenance,
  tenantId: view.tenantId,
  waitingReason: view.waitingReason,
  ...(view.waitingFor !== undefined ? { waitingFor: view.waitingFor } : {}),
  macs: view.macs,
  updatedAt: view.updatedAt,
  lastSeq: view.lastSeq,
  workflowId: view.workflowId,
  addresses: view.addresses,
  poolId: view.poolId,
  agent: view.agent,
  serial: view.inventory?.serial ?? null,
});
