import type { NodeOperation, ResolvedStep, RetryPolicy, StepRunsOn } from '../../schemas/metal/workflow.ts';

/** A step as a profile lists it; unset fields take the step kind's defaults. */
export interface ProfileStep {
  readonly id: string;
  readonly runsOn: StepRunsOn;
  readonly params?: Record<string, unknown>;
  readonly timeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly destructive?: boolean;
}

/**
 * A named, versioned recipe for one node operation. `steps(inputs)` is pure: its output is frozen into
 * `WorkflowStarted`, so a running workflow never changes when the profile does.
 */
export interface Profile<I extends string = string> {
  readonly id: I;
  readonly version: number;
  readonly operation: NodeOperation;
  steps(inputs: Readonly<Record<string, unknown>>): readonly ProfileStep[];
}

/** Defaults: 5 min timeout, 3 attempts 2 s apart, not destructive. */
export const stepDefaults = { timeoutMs: 300_000, retry: { maxAttempts: 3, backoffMs: 2_000 }, destructive: false } as const;

export function defineProfile<const I extends string>(profile: Profile<I>): Profile<I> {
  return Object.freeze(profile);
}

/** The profile's steps with every default filled in: what the workflow stores. */
export function resolveSteps(profile: Profile, inputs: Readonly<Record<string, unknown>>): ResolvedStep[] {
  return profile.steps(inputs).map((s) => ({
    id: s.id,
    runsOn: s.runsOn,
    params: { ...(s.params ?? {}) },
    timeoutMs: s.timeoutMs ?? stepDefaults.timeoutMs,
    retry: { ...stepDefaults.retry, ...(s.retry ?? {}) },
    destructive: s.destructive ?? stepDefaults.destructive,
  }));
}
