import { z } from 'zod';
import { WorkflowId } from './workflowCommands.ts';
import { BmcEndpoint } from '../agent/bmc.ts';
import { ResourceId } from '../ids.ts';
import { InBandInventory } from './inBandInventory.ts';
import { Inventory } from './inventory.ts';
import { MacAddress } from './macAddress.ts';
import { ProfileId } from './workflow.ts';
import { LabelKey, LabelValue } from './nodeLabels.ts';

/** `metal.enroll`: register a machine at a site; it starts in `enrolled`. Omit `nodeId` to derive one from the command id. */
export const EnrollNode = z
  .object({
    nodeId: ResourceId.optional(),
    siteId: ResourceId,
    bmc: BmcEndpoint,
    /**
     * A built-in, configured or plugin hardware profile (`HARDWARE_PROFILE_UNKNOWN` otherwise): its drivers drive the
     * node. Omitted: the pool's `policy.hardwareProfile`, else the built-in `default`.
     */
    hardwareProfile: z.string().min(1).max(100).optional(),
    macs: z.array(MacAddress).min(1).max(32),
    /** IPv4 addresses the machine's own API answers on (an agentless OS): the only hosts `site.httpProxy` may reach. */
    addresses: z.array(z.ipv4()).max(16).default([]),
    /**
     * The metal pool (`vps.createPool … class: 'metal'`) the node serves; it must be at this site. The pool's `agent`
     * decides whether the node ever runs `bcd` (none: agentless, out-of-band only).
     */
    poolId: ResourceId.optional(),
    /**
     * The inspection after enrolment boots the ramdisk too and compares what it sees from inside with the BMC (as
     * `metal.inspect` does); default false: the BMC's inventory only. Refused for agentless pools.
     */
    inspectInBand: z.boolean().default(false),
  })
  .strict();
export type EnrollNode = z.input<typeof EnrollNode>;

/**
 * `metal.setMaintenance`: an operator takes a node out of (or back into) service. Manual maintenance stays until an
 * operator clears it; a repeated request with the same flag and reason is a no-op.
 */
export const SetMaintenance = z
  .object({
    nodeId: ResourceId,
    on: z.boolean(),
    reason: z.string().max(500).optional(),
  })
  .strict();
export type SetMaintenance = z.infer<typeof SetMaintenance>;

/**
 * `metal.setLabels`: an operator sets and removes a node's own labels in one command (a key in both is refused). Keys under `bc.dev/` are derived and refused (`LABEL_RESERVED`); a command
 * that changes nothing appends nothing.
 */
export const SetLabels = z
  .object({
    nodeId: ResourceId,
    set: z.record(LabelKey, LabelValue).default({}),
    remove: z.array(LabelKey).max(64).default([]),
  })
  .strict()
  .refine((c) => !c.remove.some((key) => Object.hasOwn(c.set, key)), { message: 'a key is either set or removed, not both', path: ['remove'] });
export type SetLabels = z.input<typeof SetLabels>;

/**
 * `metal.reportBmcHealth` (sent by the BMC monitor): whether the node's BMC answered a signed power read. A lost BMC
 * puts a node that is not in maintenance into maintenance (source `bmc`); the BMC answering again clears exactly
 * that, never a flag an operator or a failed release set.
 */
export const ReportBmcHealth = z
  .object({
    nodeId: ResourceId,
    reachable: z.boolean(),
    detail: z.string().max(500).optional(),
  })
  .strict();
export type ReportBmcHealth = z.infer<typeof ReportBmcHealth>;

const nodeOnly = z.object({ nodeId: ResourceId }).strict();
/**
 * The node verbs a tenant may send. `tenantId` is the tenant acting: the API sets it from a tenant token (a tenant
 * cannot name another); an operator may set it to act for a tenant. A node owned by another tenant answers NOT_FOUND.
 */
const tenantScoped = z.object({ nodeId: ResourceId, tenantId: ResourceId.optional() }).strict();

/**
 * `metal.deploy`: write an image to a ready node and boot it (the built-in profile: `imageUrl` and `imageSha256`
 * required), or run a registered deploy `profile` (its steps take the inputs they name). Queued
 * (`waiting-for-capacity`) while the site is at its deploy cap.
 */
export const DeployNode = z
  .object({
    nodeId: ResourceId,
    profile: ProfileId.optional(),
    imageUrl: z.string().url().optional(),
    imageSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    role: z.string().min(1).max(100),
    userData: z.string().max(65_536).optional(),
    sshKeys: z.array(z.string()).max(64).optional(),
    /** cloud-init network configuration (v1 or v2 YAML), written into the deployed disk's NoCloud seed. */
    networkConfig: z.string().max(65_536).optional(),
    /** The tenant the node is deployed for: it owns the node until its release returns it to `ready`. */
    tenantId: ResourceId.optional(),
    /**
     * More inputs for a registered profile's `fromInput(name)` params (e.g. an ISO URL, a certificate pin). The named
     * fields above win over an input of the same name. Values are plain JSON scalars or lists of strings.
     */
    inputs: z
      .record(
        z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/),
        z.union([z.string().max(4_096), z.number(), z.boolean(), z.array(z.string().max(4_096)).max(64)]),
      )
      .refine((inputs) => Object.keys(inputs).length <= 32, 'at most 32 inputs')
      .refine((inputs) => !Object.hasOwn(inputs, 'profile'), 'name the profile with profile, not in inputs')
      .optional(),
  })
  .strict()
  .refine((c) => c.profile !== undefined || (c.imageUrl !== undefined && c.imageSha256 !== undefined), {
    message: 'imageUrl and imageSha256 are required unless a profile is named',
    path: ['imageUrl'],
  });
export type DeployNode = z.infer<typeof DeployNode>;

/** `metal.undeploy`: release a deployed node; it returns to `ready` only after an attested wipe. */
export const UndeployNode = tenantScoped;
/** `metal.rescue`: boot a ready, deployed or failed node into the ramdisk for repair. */
export const RescueNode = tenantScoped;
/** `metal.unrescue`: leave rescue for the state the node was rescued from. */
export const UnrescueNode = tenantScoped;
/**
 * `metal.retire`: take an idle (enrolled, ready or failed) node out of the fleet for good: its disks are wiped
 * (attested, with the pool's wipe method) and the machine powered off; without an attested wipe it fails into maintenance.
 */
export const RetireNode = nodeOnly;
/**
 * `metal.retry`: from `failed`, run the operation that failed again (a new workflow). `approvedPlanDigest` (sent by
 * the autonomy engine) travels with the workflow's inputs, and `workflow.start` refuses a workflow that is not the
 * plan approved (`PLAN_DIGEST_MISMATCH`).
 */
export const RetryNode = z
  .object({
    nodeId: ResourceId,
    approvedPlanDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  })
  .strict();
/** What any remediation asks for, whatever it targets: the profile, its inputs, and the plan an approval covered. */
export const RemediationRequest = z.object({
  profile: ProfileId,
  allowDestructive: z.boolean().default(false),
  inputs: z
    .record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/), z.union([z.string().max(4_096), z.number(), z.boolean()]))
    .refine((inputs) => Object.keys(inputs).length <= 32, 'at most 32 inputs')
    .optional(),
  approvedPlanDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

/**
 * `metal.remediate`: run a built-in or plugin `profile` (any role) on a ready or deployed node, then return the node
 * to the state it was in. A profile with a destructive step is refused unless `allowDestructive` (the autonomy engine
 * sets it only for categories declared destructive). `inputs` feed the profile's `fromInput(...)` params;
 * `approvedPlanDigest` as for `metal.retry`.
 */
export const RemediateNode = RemediationRequest.extend({ nodeId: ResourceId }).strict();
export type RemediateNode = z.infer<typeof RemediateNode>;

/** Inputs a remediation's workflow carries besides the profile's own: where the node returns, whether destruction was allowed. */
export const RemediationInputs = { returnTo: 'remediateReturnTo', allowDestructive: 'remediateAllowDestructive' } as const;

/**
 * `metal.cancel` (operators): stop the node's running operation safely. No new step starts; a destructive step that
 * is running finishes first. A cancelled deploy or release ends `failed` in maintenance (the disk may hold half an
 * image, or the last tenant's data); a cancelled inspection or rescue ends `failed`; an operation cancelled before
 * any step started goes back to where the node was (`metal.retry` runs a cancelled operation again).
 */
export const CancelNode = z.object({ nodeId: ResourceId, reason: z.string().min(1).max(500).optional() }).strict();
export type CancelNode = z.infer<typeof CancelNode>;

/** `metal.completeCancel` (internal): the node's workflow was cancelled; the node takes its stated end state. */
export const CompleteCancel = z.object({ nodeId: ResourceId, workflowId: WorkflowId }).strict();
export type CompleteCancel = z.infer<typeof CompleteCancel>;

/**
 * `metal.inspect`: an operator inspects a node again (`ready`, or `failed` at an inspection). `inBand` (default true) boots the
 * ramdisk and compares what it sees from inside with the BMC's inventory; false reads the BMC only.
 */
export const InspectNode = z.object({ nodeId: ResourceId, inBand: z.boolean().default(true) }).strict();
export type InspectNode = z.input<typeof InspectNode>;

/** `metal.startInspection` (internal): the orchestrator inspects every enrolled node. */
export const StartInspection = nodeOnly;

/** `metal.completeOperation` (internal): the node's workflow completed. */
export const CompleteOperation = z.object({ nodeId: ResourceId, workflowId: WorkflowId }).strict();
export type CompleteOperation = z.infer<typeof CompleteOperation>;

/** `metal.failOperation` (internal): the node's workflow failed at `failedStep`. */
export const FailOperation = z
  .object({
    nodeId: ResourceId,
    workflowId: WorkflowId,
    reason: z.string().max(1000),
    failedStep: z.string().nullable(),
    /** The workflow's failure code; `BOOT_CONTESTED` puts the node in maintenance whatever the operation. */
    code: z.string().max(100).optional(),
  })
  .strict();
export type FailOperation = z.infer<typeof FailOperation>;

/** `metal.markWiping` (internal): the release workflow reached its wipe step. */
export const MarkWiping = z.object({ nodeId: ResourceId, workflowId: WorkflowId }).strict();

/**
 * `metal.recordInventory` (internal): hardware facts an inspection read: the BMC's, and (an in-band inspection) what
 * the ramdisk saw from inside, which the decider compares with them.
 */
export const RecordInventory = z.object({ nodeId: ResourceId, workflowId: WorkflowId, inventory: Inventory, inBand: InBandInventory.optional() }).strict();
export type RecordInventory = z.infer<typeof RecordInventory>;
