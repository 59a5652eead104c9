import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { StepAttests, StepRecords } from './stepDeclarations.ts';

/** Where a step runs: in a control-plane executor, on the site agent (BMC), or on the agent inside the node. */
export const StepRunsOn = z.enum(['control-plane', 'site', 'node']);
export type StepRunsOn = z.infer<typeof StepRunsOn>;

/** Attempts include the first one; `backoffMs` is the delay before each retry (the executor's `nak` delay). */
export const RetryPolicy = z.object({ maxAttempts: z.number().int().min(1).max(20), backoffMs: z.number().int().nonnegative() });
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/**
 * One step of a workflow as resolved at start: the profile's choice frozen into the log, so a later profile
 * version never changes a running workflow. `id` names the step implementation (for agent steps, the command kind).
 */
export const ResolvedStep = z.object({
  id: z.string().min(1),
  runsOn: StepRunsOn,
  params: z.record(z.string(), z.unknown()),
  timeoutMs: z.number().int().positive(),
  retry: RetryPolicy,
  destructive: z.boolean(),
  /** The plugin whose process runs the step (work on `bc.work.plugin.<id>.<stepId>`); absent: the platform's executor. */
  plugin: z.string().optional(),
  /** The step's declared behaviour (`StepDeclarations`), frozen with it: what the engine decides by, never the id. */
  attests: StepAttests.optional(),
  records: StepRecords.optional(),
});
export type ResolvedStep = z.infer<typeof ResolvedStep>;

/** A profile id: not a subject token, so versions may be dotted (`ubuntu-24.04-autoinstall`). */
export const ProfileId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be 1-63 chars of a-z, 0-9, ".", "-" or "_"');

export const ProfileRef = z.object({ id: z.string(), version: z.number().int().positive() });
export type ProfileRef = z.infer<typeof ProfileRef>;

/**
 * Node operations a workflow carries out; each names the built-in profile that implements it, except `remediate`,
 * which runs the built-in or plugin profile its request names and returns the node to where it was.
 */
export const NodeOperation = z.enum(['inspect', 'deploy', 'release', 'rescue', 'retire', 'remediate']);
export type NodeOperation = z.infer<typeof NodeOperation>;

/**
 * Operations after which the machine must hold no tenant data: they end in their done state only with an attested
 * wipe (or, in an agentless pool that opted in, a recorded unverified release); anything else fails them into maintenance.
 */
export const erasingOperations: ReadonlySet<NodeOperation> = new Set(['release', 'retire']);

/** The slot kinds caps count: concurrent deploys and concurrent wipes. */
export type CappedSlot = 'deploys' | 'wipes';

/**
 * Operations that take a capacity slot: one of their site's (BC_MAX_DEPLOYS_PER_SITE / BC_MAX_WIPES_PER_SITE) and, when
 * the node is a tenant's, one of the tenant's (BC_MAX_DEPLOYS_PER_TENANT / BC_MAX_WIPES_PER_TENANT, `vps.setTenantCaps`).
 */
export const cappedOperations: Readonly<Partial<Record<NodeOperation, CappedSlot>>> = { deploy: 'deploys', release: 'wipes', retire: 'wipes' };

/**
 * The VPS instance a workflow runs against (absent: it runs against a node). Such a workflow's `nodeId` is the instance
 * id and its `siteId` the instance's pool, so work subjects, read models and the orchestrator keep one shape; only
 * control-plane steps run in it, and it ends with `vps.completeRemediation` / `vps.failRemediation` on the instance.
 */
export const InstanceTarget = z.object({ instanceId: ResourceId, tenantId: ResourceId }).strict();
export type InstanceTarget = z.infer<typeof InstanceTarget>;

/**
 * Slots per site and slot kind; `tenant`: the default per tenant (absent or unset: tenants are held only by their sites'
 * caps); `workflows`: workflows in flight across the fleet, of every operation, capped or not (absent: no such cap).
 */
export interface CapacityCaps {
  readonly deploys: number;
  readonly wipes: number;
  readonly tenant?: Partial<Readonly<Record<CappedSlot, number>>>;
  readonly workflows?: number;
}

/** Why a requested operation has not started yet. */
export const WaitingReason = { capacity: 'waiting-for-capacity' } as const;

/** The cap that holds a waiting operation: its site's slot kind, or its tenant's; `inFlight` of `cap` are running. */
export type CapHold =
  | { readonly cap: 'site'; readonly siteId: string; readonly slot: CappedSlot; readonly inFlight: number; readonly limit: number }
  | { readonly cap: 'tenant'; readonly tenantId: string; readonly slot: CappedSlot; readonly inFlight: number; readonly limit: number };

/** The hold in words, as the API, the CLI and the console show it: `tenant cap (2 of 2 deploys in flight for tenant acme)`. */
export const describeCapHold = (hold: CapHold): string =>
  hold.cap === 'site'
    ? `site cap (${hold.inFlight} of ${hold.limit} ${hold.slot} in flight at site ${hold.siteId})`
    : `tenant cap (${hold.inFlight} of ${hold.limit} ${hold.slot} in flight for tenant ${hold.tenantId})`;

/** A unit of step work on BC_WORK (`Nats-Msg-Id` = `<workflowId>-s<index>-a<attempt>`). */
export const WorkMessage = z.object({ workflowId: z.string(), stepIndex: z.number().int().nonnegative(), attempt: z.number().int().positive() });
export type WorkMessage = z.infer<typeof WorkMessage>;

/** `<workflowId>-s<index>-a<attempt>`: the work message id and the agent command id of one step attempt. */
export const stepAttemptId = (workflowId: string, stepIndex: number, attempt: number) => `${workflowId}-s${stepIndex}-a${attempt}`;
