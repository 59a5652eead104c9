import { z } from 'zod';
import { InBandInventory } from './inBandInventory.ts';
import { Inventory } from './inventory.ts';
import { InventoryFinding } from './inventoryFinding.ts';
import { BmcAuth, BootMode } from '../agent/bmc.ts';
import { AgentPresence } from '../agent/agentPresence.ts';
import { nodeStates } from './nodeState.ts';
import { NodeOperation } from './workflow.ts';

/** A node as the read model serves it. Credentials appear only as a secret reference. */
export const NodeView = z.object({
  nodeId: z.string(),
  siteId: z.string(),
  state: z.enum(nodeStates),
  maintenance: z.boolean(),
  maintenanceReason: z.string().nullable(),
  /** `operator` (stays until cleared), `bmc` (set on BMC loss, clears on recovery), `platform` (a release that could not prove its wipe). */
  maintenanceSource: z.enum(['operator', 'bmc', 'platform']).nullable(),
  /** The tenant the node works for (deployed or rescued with a tenant token); null when it belongs to no tenant. */
  tenantId: z.string().nullable(),
  /** The role the node is deployed as (`metal.deploy … role`), from the deploy request until it is back in `ready` or retired; else null. */
  role: z.string().nullable(),
  bmcAddress: z.string(),
  bmcCredentialsRef: z.string(),
  /** How the site agent authenticates to the BMC (enrolled; default `auto`). */
  bmcAuth: BmcAuth,
  /** How the BMC's certificate is trusted: `system` (the site's store), `ca`, `pin`, or `insecure` (lab only: nothing is verified). */
  bmcTls: z.enum(['system', 'ca', 'pin', 'insecure']),
  /** The enrolled boot mode for boot overrides; null: the BMC family's default (UEFI; Legacy on AMI). */
  bmcBootMode: BootMode.nullable(),
  hardwareProfile: z.string(),
  macs: z.array(z.string()),
  enrolledAt: z.string(),
  updatedAt: z.string(),
  lastSeq: z.number().int(),
  /** The operation under way (or queued) and its workflow; null when the node rests. */
  operation: NodeOperation.nullable(),
  workflowId: z.string().nullable(),
  /** Why a requested operation has not started, e.g. `waiting-for-capacity`. */
  waitingReason: z.string().nullable(),
  /**
   * While waiting for capacity, the cap that holds it in words: `site cap (10 of 10 deploys in flight at site dc1)` or
   * `tenant cap (2 of 2 deploys in flight for tenant acme)`; absent otherwise (or when the API was not given the caps).
   */
  waitingFor: z.string().optional(),
  /** Set in `failed`: what failed, at which step. */
  failure: z.object({ operation: NodeOperation.nullable(), reason: z.string(), failedStep: z.string().nullable() }).nullable(),
  /** Hardware facts from the last inspection. */
  inventory: Inventory.nullable(),
  /** What the last in-band inspection (`metal.inspect`) saw from inside the machine; null: never inspected in band. */
  inBandInventory: InBandInventory.nullable(),
  /** Where that disagrees with the BMC's `inventory` (`schemas/metal/inventoryFinding.ts`); null: never compared, []: they agree. */
  inventoryFindings: z.array(InventoryFinding).nullable(),
  /** Where the machine's own API answers: the enrolled addresses plus the IPv4 addresses inspections read over Redfish. */
  addresses: z.array(z.string()),
  /** The metal pool the node serves; null when it is in none. */
  poolId: z.string().nullable(),
  /** Whether the node runs `bcd` (`bcd`, the default) or is agentless (`none`, from its pool). */
  agent: z.enum(['none', 'bcd']),
  /**
   * An agent of this node (ramdisk or installed OS) that runs in the node's state registered and heartbeats: its last
   * verified heartbeat is within `BC_AGENT_PRESENCE_WINDOW_MS`. Always false for agentless nodes.
   */
  connected: z.boolean(),
  /** The last verified heartbeat of an agent of this node that this API process heard (since it started); null: none. */
  lastHeartbeat: AgentPresence.nullable(),
  /** Ready, in service and able to run an agent: what reservations may take. Never true for agentless nodes. */
  schedulable: z.boolean(),
  /** The labels an operator set (`metal.setLabels`). */
  operatorLabels: z.record(z.string(), z.string()),
  /**
   * What selectors and placement match on: the operator's labels, then the derived ones (`bc.dev/site`,
   * `bc.dev/cpu.cores` and `bc.dev/memory.mib` from the inventory, `bc.dev/driver.<id>` = version for each driver the
   * deployed node's `bcd node` last advertised to this API process), which no operator label overrides.
   */
  labels: z.record(z.string(), z.string()),
});
export type NodeView = z.infer<typeof NodeView>;

/**
 * A node as a list of thousands shows it (`GET /v1/nodes?view=row`): what the console's node table, search, filters
 * and bulk actions read, without the inventories, findings and labels that make a full view several times larger.
 */
export const NodeRowView = NodeView.pick({
  nodeId: true,
  siteId: true,
  state: true,
  maintenance: true,
  tenantId: true,
  waitingReason: true,
  waitingFor: true,
  macs: true,
  updatedAt: true,
  lastSeq: true,
  workflowId: true,
  addresses: true,
  poolId: true,
  agent: true,
}).extend({
  /** The serial number the last inspection read, for search; null: never inspected. */
  serial: z.string().nullable(),
});
export type NodeRowView = z.infer<typeof NodeRowView>;
