import { z } from 'zod';
import { HostModuleReport } from '../agent/hostModules.ts';

/**
 * What sensors see: read-model rows and the latest observations, reduced to the fields the first lanes need. Built
 * by `fleet-sensors` before each pass; sensors are pure functions of it.
 */
export const SnapshotNode = z.object({
  nodeId: z.string(),
  siteId: z.string(),
  state: z.string(),
  maintenance: z.boolean(),
  maintenanceSource: z.enum(['operator', 'bmc', 'platform']).nullable(),
  failure: z.object({ operation: z.string().nullable(), reason: z.string(), failedStep: z.string().nullable() }).nullable(),
  waitingReason: z.string().nullable(),
  updatedAt: z.string(),
  /** Whether the node runs `bcd` (the default) or is agentless (`none`, from its pool): only the former heartbeat. */
  agent: z.enum(['none', 'bcd']),
  /** One of the control plane's own machines (`BC_CONTROL_PLANE_NODES`): never a remediation target. */
  controlPlane: z.boolean(),
});
export type SnapshotNode = z.infer<typeof SnapshotNode>;

/** The BMC monitor's latest probe of a node: consecutive failed reads (its hysteresis counter). */
export const BmcObservation = z.object({
  nodeId: z.string(),
  siteId: z.string(),
  consecutiveFailures: z.number().int().nonnegative(),
  lastError: z.string().nullable(),
  at: z.string(),
});
export type BmcObservation = z.infer<typeof BmcObservation>;

export const SnapshotStep = z.object({
  workflowId: z.string(),
  nodeId: z.string(),
  siteId: z.string().nullable(),
  stepId: z.string(),
  startedAt: z.string(),
  timeoutMs: z.number().int().positive(),
});
export type SnapshotStep = z.infer<typeof SnapshotStep>;

export const SnapshotInstance = z.object({
  instanceId: z.string(),
  tenantId: z.string(),
  desired: z.string(),
  observed: z.string().nullable(),
  message: z.string().nullable(),
  /** A metal-pool instance's node, from the `vps` read model's placement (absent or null: not placed on metal). */
  placement: z.object({ siteId: z.string(), nodeId: z.string() }).nullable().optional(),
});
export type SnapshotInstance = z.infer<typeof SnapshotInstance>;

export const SnapshotAgent = z.object({
  agentId: z.string(),
  role: z.string(),
  siteId: z.string(),
  nodeId: z.string().nullable(),
  keySince: z.string(),
  /** When the control plane asked it to replace its current key (`AgentKeyRotationRequested`); null: not asked. */
  rotationRequestedAt: z.string().nullable(),
});
export type SnapshotAgent = z.infer<typeof SnapshotAgent>;

/**
 * The last verified heartbeat of a node's agent that `fleet-sensors` heard (`AgentPresence`), reduced, with the modules
 * it reported (`bcd node`: version, manifest digest, state — `pending` a reboot, `failed` a probe — and probes).
 */
export const SnapshotHeartbeat = z.object({
  nodeId: z.string(),
  agentId: z.string(),
  role: z.enum(['ramdisk', 'node']),
  heardAt: z.string(),
  modules: z.array(HostModuleReport),
});
export type SnapshotHeartbeat = z.infer<typeof SnapshotHeartbeat>;

/** A module version a host's assignment pins, with the manifest digest it was published with (null: not published here). */
export const SnapshotPinnedModule = z.object({ name: z.string(), version: z.string(), digest: z.string().nullable() });
export type SnapshotPinnedModule = z.infer<typeof SnapshotPinnedModule>;

/** A host's pinned plan from the `modules` read model (`HostPlanAssigned`): what its `bcd node` should report. */
export const SnapshotAssignment = z.object({
  nodeId: z.string(),
  /** When the plan was last assigned: a host has the report grace from then to apply it. */
  assignedAt: z.string(),
  planDigest: z.string(),
  modules: z.array(SnapshotPinnedModule),
});
export type SnapshotAssignment = z.infer<typeof SnapshotAssignment>;

/** A module whose version the host's template resolves to now differs from its pin (null: absent on that side). */
export const SnapshotPlanChange = z.object({ module: z.string(), from: z.string().nullable(), to: z.string().nullable() });
export type SnapshotPlanChange = z.infer<typeof SnapshotPlanChange>;

/** One closure conflict, reduced: its stable code and what it names (a module, a capability, a template or a cycle). */
export const SnapshotClosureConflict = z.object({ code: z.string(), subject: z.string() });
export type SnapshotClosureConflict = z.infer<typeof SnapshotClosureConflict>;

/**
 * What a host's template and pins resolve to now, from the read model's templates and published versions, against
 * the plan it is pinned to: the resolved plan's digest and the modules that would change, or every conflict when the
 * template no longer resolves. A host changes only through a rollout or an explicit apply, so this can lag.
 */
export const SnapshotTemplateClosure = z.object({
  nodeId: z.string(),
  template: z.string(),
  pinnedDigest: z.string(),
  now: z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), planDigest: z.string(), changes: z.array(SnapshotPlanChange) }),
    z.object({ ok: z.literal(false), conflicts: z.array(SnapshotClosureConflict) }),
  ]),
});
export type SnapshotTemplateClosure = z.infer<typeof SnapshotTemplateClosure>;

export const FleetSnapshot = z.object({
  at: z.string(),
  nodes: z.array(SnapshotNode),
  bmc: z.array(BmcObservation),
  runningSteps: z.array(SnapshotStep),
  instances: z.array(SnapshotInstance),
  agents: z.array(SnapshotAgent),
  heartbeats: z.array(SnapshotHeartbeat),
  /**
   * Since when `heartbeats` holds every heartbeat that verified (the listener's start, or its connection's last
   * return): silence before it means nothing. Null: no heartbeats were listened to, so nobody's silence is known.
   */
  heartbeatsSince: z.string().nullable(),
  /** Every host's pinned module plan (hosts without an assignment have none: nothing is pinned on them). */
  assignments: z.array(SnapshotAssignment),
  /** Every assigned host with a template, resolved again now (hosts with pins only have nothing to lag behind). */
  templateClosures: z.array(SnapshotTemplateClosure),
});
export type FleetSnapshot = z.infer<typeof FleetSnapshot>;

/** A snapshot at `at` that saw nothing (and listened to no heartbeats): what a caller fills in with what it has. */
export const emptyFleetSnapshot = (at: string): FleetSnapshot => ({
  at,
  nodes: [],
  bmc: [],
  runningSteps: [],
  instances: [],
  agents: [],
  heartbeats: [],
  heartbeatsSince: null,
  assignments: [],
  templateClosures: [],
});
