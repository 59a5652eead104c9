import type { Database } from 'better-sqlite3';
import type { NodeState } from '../../schemas/metal/nodeState.ts';
import type { NodeView } from '../../schemas/metal/views.ts';
import type { AgentPresence, AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import { effectiveNodeLabels, matchesSelector, type LabelSelector } from '../../schemas/metal/nodeLabels.ts';
import { BmcOptions, type BmcConnection } from '../../schemas/agent/bmc.ts';
import { describeCapHold, WaitingReason, type CapacityCaps } from '../../schemas/metal/workflow.ts';
import { decodeCursor, encodeCursor } from '../runtime/cursor.ts';
import { capHoldsOf, type WaitingNode } from './capHolds.ts';

interface NodeRow {
  node_id: string;
  site_id: string;
  state: NodeState;
  maintenance: number;
  maintenance_reason: string | null;
  maintenance_source: NodeView['maintenanceSource'];
  bmc_address: string;
  bmc_credentials_ref: string;
  hardware_profile: string;
  macs: string;
  enrolled_at: string;
  updated_at: string;
  last_seq: number;
  current_operation: NodeView['operation'];
  current_workflow_id: string | null;
  waiting_reason: string | null;
  failure_reason: string | null;
  failed_step: string | null;
  failed_operation: NodeView['operation'];
  inventory: string | null;
  in_band_inventory: string | null;
  inventory_findings: string | null;
  owner_tenant_id: string | null;
  pool_id: string | null;
  agent: NodeView['agent'];
  addresses: string;
  agent_role: 'ramdisk' | 'node' | null;
  bmc_options: string;
  role: string | null;
  labels: string;
}

/** Where each agent role runs: a ramdisk while an operation boots it (and in rescue), an installed OS's agent once deployed. */
const agentRunsIn: Record<'ramdisk' | 'node', readonly NodeState[]> = {
  ramdisk: ['deploying', 'releasing', 'wiping', 'rescuing', 'rescue', 'retiring'],
  node: ['deployed'],
};

/**
 * `connected`: an agent whose role runs in the node's state registered since the machine last restarted (the
 * projection's `agent_role`) and an agent of that role heartbeats within the window (`presence`): a registration
 * alone says nothing of an agent that died since. Without `presence` (a reader that hears no heartbeats) never.
 */
function connectedOf(r: NodeRow, heard: ReturnType<AgentPresenceLookup['presenceOf']>): boolean {
  if (r.agent === 'none' || r.agent_role === null || !agentRunsIn[r.agent_role].includes(r.state)) return false;
  return heard !== undefined && heard.alive && agentRunsIn[heard.presence.role].includes(r.state);
}

/** Says which cap holds a node waiting for capacity (none without the caps). */
type HoldReader = ((node: WaitingNode) => ReturnType<ReturnType<typeof capHoldsOf>>) | undefined;

const toView = (r: NodeRow, presence?: AgentPresenceLookup, holds?: HoldReader): NodeView => {
  const heard = r.agent === 'none' ? undefined : presence?.presenceOf(r.node_id);
  const hold = r.waiting_reason === WaitingReason.capacity ? holds?.(r) : undefined;
  const inventory = r.inventory === null ? null : (JSON.parse(r.inventory) as NodeView['inventory']);
  return {
    nodeId: r.node_id,
    siteId: r.site_id,
    state: r.state,
    maintenance: r.maintenance === 1,
    maintenanceReason: r.maintenance_reason,
    maintenanceSource: r.maintenance_source,
    tenantId: r.owner_tenant_id,
    role: r.role,
    bmcAddress: r.bmc_address,
    bmcCredentialsRef: r.bmc_credentials_ref,
    ...bmcViewOf(BmcOptions.parse(JSON.parse(r.bmc_options))),
    hardwareProfile: r.hardware_profile,
    macs: JSON.parse(r.macs) as string[],
    enrolledAt: r.enrolled_at,
    updatedAt: r.updated_at,
    lastSeq: r.last_seq,
    operation: r.current_operation,
    workflowId: r.current_workflow_id,
    waitingReason: r.waiting_reason,
    ...(hold ? { waitingFor: describeCapHold(hold) } : {}),
    failure: r.failure_reason === null ? null : { operation: r.failed_operation, reason: r.failure_reason, failedStep: r.failed_step },
    inventory,
    inBandInventory: r.in_band_inventory === null ? null : (JSON.parse(r.in_band_inventory) as NodeView['inBandInventory']),
    inventoryFindings: r.inventory_findings === null ? null : (JSON.parse(r.inventory_findings) as NodeView['inventoryFindings']),
    addresses: JSON.parse(r.addresses) as string[],
    poolId: r.pool_id,
    agent: r.agent,
    connected: connectedOf(r, heard),
    lastHeartbeat: heard?.presence ?? null,
    schedulable: r.agent !== 'none' && r.state === 'ready' && r.maintenance === 0,
    ...labelsOf(r, inventory, heard?.presence),
  };
};

/**
 * The node's operator labels and its effective ones. Drivers count only as the deployed node's `bcd node` last
 * advertised them: a ramdisk runs no driver, and a host redeployed since runs whatever its new agent says.
 */
function labelsOf(r: NodeRow, inventory: NodeView['inventory'], heard: AgentPresence | undefined): Pick<NodeView, 'operatorLabels' | 'labels'> {
  const operatorLabels = JSON.parse(r.labels) as Record<string, string>;
  const drivers = heard?.role === 'node' && r.state === 'deployed' ? heard.drivers : [];
  const labels = effectiveNodeLabels(operatorLabels, { siteId: r.site_id, cpus: inventory?.cpus.cores, memoryMib: inventory?.memoryMiB, drivers });
  return { operatorLabels, labels };
}

function bmcViewOf(options: BmcOptions): Pick<NodeView, 'bmcAuth' | 'bmcTls' | 'bmcBootMode'> {
  return { bmcAuth: options.auth ?? 'auto', bmcTls: options.tls?.mode ?? 'system', bmcBootMode: options.bootMode ?? null };
}

/** The node's BMC as agent commands carry it (address, reference, enrolled options); undefined for an unknown node. */
export function getBmcConnection(db: Database, nodeId: string): BmcConnection | undefined {
  const row = db.prepare('SELECT bmc_address, bmc_credentials_ref, bmc_options FROM nodes WHERE node_id = ?').get(nodeId) as
    Pick<NodeRow, 'bmc_address' | 'bmc_credentials_ref' | 'bmc_options'> | undefined;
  return row && { address: row.bmc_address, credentialsRef: row.bmc_credentials_ref, ...BmcOptions.parse(JSON.parse(row.bmc_options)) };
}

/** The node; with `caps` (the orchestrator's), a node waiting for capacity says which cap holds it (`waitingFor`). */
export function getNode(db: Database, nodeId: string, presence?: AgentPresenceLookup, caps?: CapacityCaps): NodeView | undefined {
  const row = db.prepare('SELECT * FROM nodes WHERE node_id = ?').get(nodeId) as NodeRow | undefined;
  return row && toView(row, presence, caps && capHoldsOf(db, caps));
}

/** `q` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
const containing = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** How many rows a label-selected list reads at a time while it looks for a page of matching nodes. */
const SCAN_BATCH = 500;

/**
 * Nodes ordered by id, filtered by site, state, pool and/or owning tenant, a search `q` (part of the node id, a MAC,
 * an address or the serial, any case) and a label `selector` (every requirement on the effective labels), `limit`
 * per page, resumed after `cursor`.
 */
export function listNodes(
  db: Database,
  filter: {
    siteId?: string;
    state?: NodeState;
    poolId?: string;
    tenantId?: string | null;
    q?: string;
    selector?: LabelSelector;
    cursor?: string;
    limit: number;
  },
  presence?: AgentPresenceLookup,
  caps?: CapacityCaps,
): { items: NodeView[]; nextCursor: string | null } {
  const query = db.prepare(
    `SELECT * FROM nodes
     WHERE node_id > @after AND (@siteId IS NULL OR site_id = @siteId) AND (@state IS NULL OR state = @state)
       AND (@poolId IS NULL OR pool_id = @poolId) AND (@tenantId IS NULL OR owner_tenant_id = @tenantId)
       AND (@like IS NULL OR node_id LIKE @like ESCAPE '\\' OR macs LIKE @like ESCAPE '\\' OR addresses LIKE @like ESCAPE '\\'
            OR json_extract(inventory, '$.serial') LIKE @like ESCAPE '\\')
     ORDER BY node_id LIMIT @limit`,
  );
  const params = {
    siteId: filter.siteId ?? null,
    state: filter.state ?? null,
    poolId: filter.poolId ?? null,
    tenantId: filter.tenantId ?? null,
    like: filter.q ? containing(filter.q) : null,
  };
  const holds = caps && capHoldsOf(db, caps);
  // Labels are matched on the view (the driver labels live in this process's heartbeats, not in the table), so a
  // selected list reads on in batches until it has the page and one node more (there is a next page) or no rows left.
  const { selector } = filter;
  const batch = selector ? Math.max(filter.limit + 1, SCAN_BATCH) : filter.limit + 1;
  const found: NodeView[] = [];
  let after = filter.cursor ? decodeCursor(filter.cursor) : '';
  for (;;) {
    const rows = query.all({ ...params, after, limit: batch }) as NodeRow[];
    for (const row of rows) {
      const view = toView(row, presence, holds);
      if (!selector || matchesSelector(view.labels, selector)) found.push(view);
      if (found.length > filter.limit) break;
    }
    if (found.length > filter.limit || rows.length < batch) break;
    after = rows.at(-1)!.node_id;
  }
  const page = found.slice(0, filter.limit);
  return { items: page, nextCursor: found.length > filter.limit ? encodeCursor(page.at(-1)!.nodeId) : null };
}
