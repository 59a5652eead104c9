import { z } from 'zod';
import { Inventory } from './inventory.ts';
import { InBandInventory } from './inBandInventory.ts';
import { InventoryFinding } from './inventoryFinding.ts';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { BmcConnection } from '../agent/bmc.ts';
import { NodeOperation } from './workflow.ts';
import { remediableStates } from './nodeState.ts';

export const NodeEnrolled = defineEvent(
  'NodeEnrolled',
  z.object({
    nodeId: z.string(),
    siteId: z.string(),
    /** With the per-node `auth`, `tls` and `bootMode` options when the enrolment gave them. */
    bmc: BmcConnection,
    hardwareProfile: z.string(),
    macs: z.array(z.string()),
    /** Absent on nodes enrolled before addresses were recorded. */
    addresses: z.array(z.string()).optional(),
    /** The metal pool the node serves, and that pool's `agent` (fixed at pool creation); absent: no pool, `bcd`. */
    poolId: z.string().optional(),
    agent: z.enum(['none', 'bcd']).optional(),
    /** Its first inspection looks from inside as well (`metal.enroll … inspectInBand`); absent: BMC only. */
    inspectInBand: z.literal(true).optional(),
  }),
);

/** `source` tells a hand-set flag (stays until cleared) from one the platform set on BMC loss (clears on recovery). */
export const NodeMaintenanceSet = defineEvent(
  'NodeMaintenanceSet',
  z.object({ nodeId: z.string(), on: z.boolean(), reason: z.string().nullable(), source: z.enum(['operator', 'bmc']) }),
);

/** `metal.setLabels`: the node's operator labels after the change, all of them (derived `bc.dev/` ones are not events). */
export const NodeLabelsSet = defineEvent('NodeLabelsSet', z.object({ nodeId: z.string(), labels: z.record(z.string(), z.string()) }));

/**
 * An operation was asked for and its workflow id fixed; the node enters the operation's working state. Capped
 * operations (deploy, release) wait for a site slot until their `WorkflowStarted`. `tenantId`: the tenant that owns
 * the node from here on (absent: no tenant); ownership ends when the node returns to `ready`.
 */
export const NodeOperationRequested = defineEvent(
  'NodeOperationRequested',
  z.object({
    nodeId: z.string(),
    siteId: z.string(),
    operation: NodeOperation,
    workflowId: z.string(),
    inputs: z.record(z.string(), z.unknown()),
    tenantId: z.string().optional(),
  }),
);
/** The release workflow reached its wipe step. */
export const NodeWipeStarted = defineEvent('NodeWipeStarted', z.object({ nodeId: z.string(), workflowId: z.string() }));
/** The workflow finished; the node rests in the operation's end state (ready, deployed or rescue). */
export const NodeOperationCompleted = defineEvent(
  'NodeOperationCompleted',
  z.object({
    nodeId: z.string(),
    operation: NodeOperation,
    workflowId: z.string(),
    /** Where the node rests when the operation does not fix it: a remediation returns to where it started. */
    state: z.enum(remediableStates).optional(),
  }),
);
/** `maintenance: true` also takes the node out of service (a release that could not prove its wipe). */
export const NodeOperationFailed = defineEvent(
  'NodeOperationFailed',
  z.object({
    nodeId: z.string(),
    operation: NodeOperation,
    workflowId: z.string(),
    reason: z.string(),
    failedStep: z.string().nullable(),
    maintenance: z.boolean(),
  }),
);
/** `metal.cancel`: the node's operation is being cancelled (the workflow stops once no destructive step runs). */
export const NodeCancelRequested = defineEvent(
  'NodeCancelRequested',
  z.object({ nodeId: z.string(), operation: NodeOperation, workflowId: z.string(), reason: z.string() }),
);
/** An operation cancelled before any of its steps started: the node is back in `state`, untouched. */
export const NodeOperationCancelled = defineEvent(
  'NodeOperationCancelled',
  z.object({ nodeId: z.string(), operation: NodeOperation, workflowId: z.string(), reason: z.string(), state: z.enum(['ready', 'deployed']) }),
);
/**
 * An inspection's facts. `inBand`: what the ramdisk saw from inside (in-band inspections only); `findings`: where that
 * disagrees with the BMC's `inventory`, recomputed whenever either changes (absent: no in-band inspection yet).
 */
export const NodeInventoryRecorded = defineEvent(
  'NodeInventoryRecorded',
  z.object({
    nodeId: z.string(),
    workflowId: z.string(),
    inventory: Inventory,
    inBand: InBandInventory.optional(),
    findings: z.array(InventoryFinding).optional(),
  }),
);
/**
 * An agentless node went back to `ready` (or was retired) after a release (or retirement) that wiped nothing (the pool opted in with
 * `policy.allowUnverifiedRelease`): the audit trail that the next tenant may find the last one's data.
 */
export const NodeReleaseUnverified = defineEvent('NodeReleaseUnverified', z.object({ nodeId: z.string(), workflowId: z.string(), poolId: z.string() }));
export const NodeRescueEnded = defineEvent('NodeRescueEnded', z.object({ nodeId: z.string() }));
/** Written by `metal.retire` before retiring became a wipe workflow (`NodeOperationCompleted` of `retire`); kept to read older logs. */
export const NodeRetired = defineEvent('NodeRetired', z.object({ nodeId: z.string() }));

export const metalEvents = [
  NodeEnrolled,
  NodeMaintenanceSet,
  NodeOperationRequested,
  NodeWipeStarted,
  NodeOperationCompleted,
  NodeOperationFailed,
  NodeCancelRequested,
  NodeOperationCancelled,
  NodeInventoryRecorded,
  NodeReleaseUnverified,
  NodeRescueEnded,
  NodeRetired,
  NodeLabelsSet,
] as const;
export type MetalEvent = EventOf<(typeof metalEvents)[number]>;
