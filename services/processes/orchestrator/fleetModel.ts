import type { PlatformEvent } from '../../../schemas/events.ts';
import {
  cappedOperations,
  type CapacityCaps,
  type CapHold,
  type CappedSlot,
  type InstanceTarget,
  type NodeOperation,
  type ResolvedStep,
} from '../../../schemas/metal/workflow.ts';
import { AdmissionQueue } from './admissionQueue.ts';

/** A requested operation whose workflow has not started yet (on a node, or with `instance` on a VPS instance). */
export interface PendingOperation {
  readonly workflowId: string;
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
  readonly inputs: Record<string, unknown>;
  readonly instance?: InstanceTarget;
  /** The tenant holding the node when the operation was requested; none: the operator's own, held only by site caps. */
  readonly tenantId?: string;
}

export interface TrackedWorkflow {
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
  readonly instance?: InstanceTarget;
  readonly steps: readonly ResolvedStep[];
  readonly outputs: unknown[];
}

export type Caps = CapacityCaps;

/** A tenant's own caps (`TenantCapsSet`); `null`: the default per tenant. */
type TenantCaps = Readonly<Record<CappedSlot, number | null>>;

/**
 * What the orchestrator knows of the fleet, folded from the log: operations waiting for a start, workflows in
 * flight per site and slot kind and per tenant and slot kind, each tenant's own caps, and each workflow's step
 * outputs. Pure: the same events give the same model, which is how a restarted orchestrator gets it back.
 */
export class FleetModel {
  /** Waiting operations grouped by the caps that hold them: admission runs after every event and must not walk them. */
  readonly #queue = new AdmissionQueue<PendingOperation>();
  readonly #inFlight = new Map<string, { slot: CappedSlot | null; siteId: string; tenantId: string | null }>();
  /** `<siteId>/<slot>` and `<tenantId>/<slot>` → workflows in flight: admission runs after every event, so it must not scan. */
  readonly #slotsUsed = new Map<string, number>();
  readonly #tenantSlotsUsed = new Map<string, number>();
  readonly #tenantCaps = new Map<string, TenantCaps>();
  readonly workflows = new Map<string, TrackedWorkflow>();

  apply(event: PlatformEvent): void {
    switch (event.type) {
      case 'NodeOperationRequested': {
        const { workflowId, nodeId, siteId, operation, inputs, tenantId } = event.data;
        if (this.#queue.has(workflowId) || this.workflows.has(workflowId)) return;
        this.#enqueue({ workflowId, nodeId, siteId, operation, inputs, ...(tenantId ? { tenantId } : {}) });
        return;
      }
      case 'TenantCapsSet':
        this.#tenantCaps.set(event.data.tenantId, { deploys: event.data.deploys, wipes: event.data.wipes });
        return;
      // A remediation of a VPS instance: its workflow targets the instance (id as `nodeId`, pool as `siteId`).
      case 'InstanceRemediationRequested': {
        const { workflowId, instanceId, tenantId, poolId, inputs } = event.data;
        if (this.#queue.has(workflowId) || this.workflows.has(workflowId)) return;
        this.#enqueue({ workflowId, nodeId: instanceId, siteId: poolId, operation: 'remediate', inputs, instance: { instanceId, tenantId } });
        return;
      }
      case 'WorkflowStarted': {
        const d = event.data;
        const waited = this.#queue.remove(d.workflowId);
        this.#occupy(d.workflowId, cappedOperations[d.operation] ?? null, d.siteId, waited?.tenantId ?? null);
        this.workflows.set(d.workflowId, {
          nodeId: d.nodeId,
          siteId: d.siteId,
          operation: d.operation,
          steps: d.steps,
          outputs: d.steps.map(() => null),
          ...(d.instance ? { instance: d.instance } : {}),
        });
        return;
      }
      case 'StepSucceeded': {
        const wf = this.workflows.get(event.data.workflowId);
        if (wf) wf.outputs[event.data.stepIndex] = event.data.output;
        return;
      }
      case 'WorkflowCompleted':
      case 'WorkflowFailed':
      case 'WorkflowCancelled':
        this.#vacate(event.data.workflowId);
        return;
      // Cancelled while waiting for a slot: it never starts (if it was admitted already, `workflow.cancel` stops it).
      case 'NodeCancelRequested':
        this.#queue.remove(event.data.workflowId);
        return;
      // An operation whose workflow could not start (its profile was refused) fails without a WorkflowFailed.
      case 'NodeOperationFailed':
      case 'InstanceRemediationFailed':
        this.#queue.remove(event.data.workflowId);
        this.#vacate(event.data.workflowId);
        return;
      default:
        return;
    }
  }

  /** Drops a workflow's step details once the orchestrator is done with it (the log keeps them). */
  forget(workflowId: string): void {
    this.workflows.delete(workflowId);
  }

  /**
   * Operations that may start now, oldest first per site, within the caps: each takes a slot of its site and, when the
   * node is a tenant's, one of the tenant's, and every operation one of the fleet's (`caps.workflows`), so no more
   * workflows run than the executors serve at once. A tenant at its cap holds only its own operations. Changes nothing: the
   * orchestrator folds the starts it decides (`admitted`), so a second look before their `WorkflowStarted` arrives
   * does not over-admit.
   */
  admissible(caps: Caps): PendingOperation[] {
    return this.#queue.admissible(
      {
        site: (siteId, slot) => caps[slot] - this.inFlight(siteId, slot),
        tenant: (tenantId, slot) => this.tenantCap(caps, tenantId, slot) - this.tenantInFlight(tenantId, slot),
      },
      (caps.workflows ?? Number.POSITIVE_INFINITY) - this.#inFlight.size,
    );
  }

  /** Workflows in flight across the fleet, every operation (what `caps.workflows` counts). */
  get workflowsInFlight(): number {
    return this.#inFlight.size;
  }

  /** A start was decided: the operation counts as in flight from here on. */
  admitted(op: Pick<PendingOperation, 'workflowId' | 'siteId' | 'operation'>): void {
    // The decided `workflow.start` does not name the tenant: the waiting operation does.
    const waited = this.#queue.remove(op.workflowId);
    this.#occupy(op.workflowId, cappedOperations[op.operation] ?? null, op.siteId, waited?.tenantId ?? null);
  }

  /** `admissible`, each counted as in flight at once. */
  admit(caps: Caps): PendingOperation[] {
    const admitted = this.admissible(caps);
    for (const op of admitted) this.admitted(op);
    return admitted;
  }

  inFlight(siteId: string, slot: CappedSlot): number {
    return this.#slotsUsed.get(`${siteId}/${slot}`) ?? 0;
  }

  tenantInFlight(tenantId: string, slot: CappedSlot): number {
    return this.#tenantSlotsUsed.get(`${tenantId}/${slot}`) ?? 0;
  }

  /** The tenant's cap of a slot kind: its own (`TenantCapsSet`), else the default per tenant, else none. */
  tenantCap(caps: Caps, tenantId: string, slot: CappedSlot): number {
    return this.#tenantCaps.get(tenantId)?.[slot] ?? caps.tenant?.[slot] ?? Number.POSITIVE_INFINITY;
  }

  /** Why a waiting operation has not started: the full cap that holds it (its site's first), or none if it may start. */
  holdOf(workflowId: string, caps: Caps): CapHold | undefined {
    const queued = this.#queue.get(workflowId);
    if (!queued?.slot) return undefined;
    const { siteId, slot, tenantId } = queued;
    const site = this.inFlight(siteId, slot);
    if (site >= caps[slot]) return { cap: 'site', siteId, slot, inFlight: site, limit: caps[slot] };
    if (tenantId === null) return undefined;
    const tenant = this.tenantInFlight(tenantId, slot);
    const limit = this.tenantCap(caps, tenantId, slot);
    return tenant >= limit ? { cap: 'tenant', tenantId, slot, inFlight: tenant, limit } : undefined;
  }

  /** Waiting operations, oldest first. */
  waiting(): PendingOperation[] {
    return [...this.#queue.values()].map((q) => q.op);
  }

  #enqueue(op: PendingOperation): void {
    this.#queue.add({ workflowId: op.workflowId, siteId: op.siteId, slot: cappedOperations[op.operation] ?? null, tenantId: op.tenantId ?? null, op });
  }

  #occupy(workflowId: string, slot: CappedSlot | null, siteId: string, tenantId: string | null): void {
    if (this.#inFlight.has(workflowId)) return;
    this.#inFlight.set(workflowId, { slot, siteId, tenantId });
    if (!slot) return;
    count(this.#slotsUsed, `${siteId}/${slot}`, 1);
    if (tenantId !== null) count(this.#tenantSlotsUsed, `${tenantId}/${slot}`, 1);
  }

  #vacate(workflowId: string): void {
    const f = this.#inFlight.get(workflowId);
    if (!f) return;
    this.#inFlight.delete(workflowId);
    if (!f.slot) return;
    count(this.#slotsUsed, `${f.siteId}/${f.slot}`, -1);
    if (f.tenantId !== null) count(this.#tenantSlotsUsed, `${f.tenantId}/${f.slot}`, -1);
  }
}

function count(counters: Map<string, number>, key: string, by: 1 | -1): void {
  const n = (counters.get(key) ?? 0) + by;
  if (n > 0) counters.set(key, n);
  else counters.delete(key);
}
