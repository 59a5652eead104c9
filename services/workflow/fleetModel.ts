import type { PlatformEvent } from '../../schemas/events.ts';
import { cappedOperations, type InstanceTarget, type NodeOperation, type ResolvedStep } from '../../schemas/metal/workflow.ts';

/** A requested operation whose workflow has not started yet (on a node, or with `instance` on a VPS instance). */
export interface PendingOperation {
  readonly workflowId: string;
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
  readonly inputs: Record<string, unknown>;
  readonly instance?: InstanceTarget;
}

export interface TrackedWorkflow {
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
  readonly instance?: InstanceTarget;
  readonly steps: readonly ResolvedStep[];
  readonly outputs: unknown[];
}

export interface Caps {
  readonly deploys: number;
  readonly wipes: number;
}

/**
 * What the orchestrator knows of the fleet, folded from the log: operations waiting for a start, workflows in
 * flight per site and slot kind, and each workflow's step outputs. Pure: the same events give the same model, which
 * is how a restarted orchestrator gets it back.
 */
export class FleetModel {
  readonly #queue: PendingOperation[] = [];
  readonly #queued = new Set<string>();
  /**
   * Waiting operations per `<siteId>/<slot>`, and the uncapped ones: admission runs after every event, and while every
   * slot with work waiting is full (a large fleet deploying) it answers from these without walking the queue.
   */
  readonly #waiting = new Map<string, { siteId: string; slot: 'deploys' | 'wipes'; count: number }>();
  #waitingUncapped = 0;
  readonly #inFlight = new Map<string, { slot: 'deploys' | 'wipes' | null; siteId: string }>();
  /** `<siteId>/<slot>` → workflows in flight: admission runs after every event, so it must not scan. */
  readonly #slotsUsed = new Map<string, number>();
  readonly workflows = new Map<string, TrackedWorkflow>();

  apply(event: PlatformEvent): void {
    switch (event.type) {
      case 'NodeOperationRequested':
        if (!this.#queued.has(event.data.workflowId) && !this.workflows.has(event.data.workflowId)) this.#enqueue(event.data);
        return;
      // A remediation of a VPS instance: its workflow targets the instance (id as `nodeId`, pool as `siteId`).
      case 'InstanceRemediationRequested': {
        const { workflowId, instanceId, tenantId, poolId, inputs } = event.data;
        if (this.#queued.has(workflowId) || this.workflows.has(workflowId)) return;
        this.#enqueue({ workflowId, nodeId: instanceId, siteId: poolId, operation: 'remediate', inputs, instance: { instanceId, tenantId } });
        return;
      }
      case 'WorkflowStarted': {
        const d = event.data;
        this.#dequeue(d.workflowId);
        this.#occupy(d.workflowId, cappedOperations[d.operation] ?? null, d.siteId);
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
        this.#dequeue(event.data.workflowId);
        return;
      // An operation whose workflow could not start (its profile was refused) fails without a WorkflowFailed.
      case 'NodeOperationFailed':
      case 'InstanceRemediationFailed':
        this.#dequeue(event.data.workflowId);
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
   * Operations that may start now, oldest first per site, within the caps. Changes nothing: the orchestrator folds the
   * starts it decides (`admitted`), so a second look before their `WorkflowStarted` arrives does not over-admit.
   */
  admissible(caps: Caps): PendingOperation[] {
    // Free slots per key, counting only as many as there are operations waiting for them.
    const free = new Map<string, number>();
    let freeTotal = 0;
    for (const [key, { siteId, slot, count }] of this.#waiting) {
      const n = Math.min(count, caps[slot] - this.inFlight(siteId, slot));
      if (n > 0) {
        free.set(key, n);
        freeTotal += n;
      }
    }
    let uncapped = this.#waitingUncapped;
    const admissible: PendingOperation[] = [];
    for (const op of this.#queue) {
      // Nothing further down the queue could be admitted.
      if (freeTotal === 0 && uncapped === 0) break;
      const slot = cappedOperations[op.operation] ?? null;
      if (!slot) {
        admissible.push(op);
        uncapped--;
        continue;
      }
      const key = `${op.siteId}/${slot}`;
      const n = free.get(key) ?? 0;
      if (n === 0) continue;
      free.set(key, n - 1);
      freeTotal--;
      admissible.push(op);
    }
    return admissible;
  }

  /** A start was decided: the operation counts as in flight from here on. */
  admitted(op: Pick<PendingOperation, 'workflowId' | 'siteId' | 'operation'>): void {
    this.#dequeue(op.workflowId);
    this.#occupy(op.workflowId, cappedOperations[op.operation] ?? null, op.siteId);
  }

  /** `admissible`, each counted as in flight at once. */
  admit(caps: Caps): PendingOperation[] {
    const admitted = this.admissible(caps);
    for (const op of admitted) this.admitted(op);
    return admitted;
  }

  inFlight(siteId: string, slot: 'deploys' | 'wipes'): number {
    return this.#slotsUsed.get(`${siteId}/${slot}`) ?? 0;
  }

  waiting(): readonly PendingOperation[] {
    return this.#queue;
  }

  #occupy(workflowId: string, slot: 'deploys' | 'wipes' | null, siteId: string): void {
    if (this.#inFlight.has(workflowId)) return;
    this.#inFlight.set(workflowId, { slot, siteId });
    if (slot) this.#slotsUsed.set(`${siteId}/${slot}`, this.inFlight(siteId, slot) + 1);
  }

  #vacate(workflowId: string): void {
    const f = this.#inFlight.get(workflowId);
    if (!f) return;
    this.#inFlight.delete(workflowId);
    if (f.slot) this.#slotsUsed.set(`${f.siteId}/${f.slot}`, this.inFlight(f.siteId, f.slot) - 1);
  }

  #enqueue(op: PendingOperation): void {
    this.#queue.push(op);
    this.#queued.add(op.workflowId);
    this.#countWaiting(op, 1);
  }

  #dequeue(workflowId: string): void {
    if (!this.#queued.delete(workflowId)) return;
    const i = this.#queue.findIndex((q) => q.workflowId === workflowId);
    this.#countWaiting(this.#queue[i]!, -1);
    this.#queue.splice(i, 1);
  }

  #countWaiting(op: PendingOperation, by: 1 | -1): void {
    const slot = cappedOperations[op.operation] ?? null;
    if (!slot) {
      this.#waitingUncapped += by;
      return;
    }
    const key = `${op.siteId}/${slot}`;
    const waiting = this.#waiting.get(key) ?? { siteId: op.siteId, slot, count: 0 };
    waiting.count += by;
    if (waiting.count > 0) this.#waiting.set(key, waiting);
    else this.#waiting.delete(key);
  }
}
