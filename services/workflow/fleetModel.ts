import type { PlatformEvent } from '../../schemas/events.ts';
import { cappedOperations, type NodeOperation, type ResolvedStep } from '../../schemas/metal/workflow.ts';

/** A requested operation whose workflow has not started yet. */
export interface PendingOperation {
  readonly workflowId: string;
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
  readonly inputs: Record<string, unknown>;
}

export interface TrackedWorkflow {
  readonly nodeId: string;
  readonly siteId: string;
  readonly operation: NodeOperation;
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
  readonly #inFlight = new Map<string, { slot: 'deploys' | 'wipes' | null; siteId: string }>();
  readonly workflows = new Map<string, TrackedWorkflow>();

  apply(event: PlatformEvent): void {
    switch (event.type) {
      case 'NodeOperationRequested':
        if (!this.#queue.some((q) => q.workflowId === event.data.workflowId) && !this.workflows.has(event.data.workflowId)) this.#queue.push(event.data);
        return;
      case 'WorkflowStarted': {
        const d = event.data;
        this.#dequeue(d.workflowId);
        this.#inFlight.set(d.workflowId, { slot: cappedOperations[d.operation] ?? null, siteId: d.siteId });
        this.workflows.set(d.workflowId, { nodeId: d.nodeId, siteId: d.siteId, operation: d.operation, steps: d.steps, outputs: d.steps.map(() => null) });
        return;
      }
      case 'StepSucceeded': {
        const wf = this.workflows.get(event.data.workflowId);
        if (wf) wf.outputs[event.data.stepIndex] = event.data.output;
        return;
      }
      case 'WorkflowCompleted':
      case 'WorkflowFailed':
        this.#inFlight.delete(event.data.workflowId);
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
   * Operations that may start now, oldest first per site, within the caps. They count as in flight from here on, so
   * a second call before their `WorkflowStarted` arrives does not over-admit.
   */
  admit(caps: Caps): PendingOperation[] {
    const admitted: PendingOperation[] = [];
    for (const op of [...this.#queue]) {
      const slot = cappedOperations[op.operation] ?? null;
      if (slot && this.inFlight(op.siteId, slot) >= caps[slot]) continue;
      this.#dequeue(op.workflowId);
      this.#inFlight.set(op.workflowId, { slot, siteId: op.siteId });
      admitted.push(op);
    }
    return admitted;
  }

  inFlight(siteId: string, slot: 'deploys' | 'wipes'): number {
    let n = 0;
    for (const f of this.#inFlight.values()) if (f.siteId === siteId && f.slot === slot) n++;
    return n;
  }

  waiting(): readonly PendingOperation[] {
    return this.#queue;
  }

  #dequeue(workflowId: string): void {
    const i = this.#queue.findIndex((q) => q.workflowId === workflowId);
    if (i >= 0) this.#queue.splice(i, 1);
  }
}
