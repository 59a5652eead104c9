import { declarationsOf, type StepDeclarations } from '../../schemas/metal/stepDeclarations.ts';
import type { ResolvedStep } from '../../schemas/metal/workflow.ts';
import { InputRef, type ProfileDescriptor, type ProfileStepSpec, type StepOutputRef } from '../../schemas/plugins/registration.ts';

/** A step as a profile lists it; unset fields take the defaults (`stepDefaults`, and the step's own `destructive`). */
export type ProfileStep = ProfileStepSpec;

/**
 * A named, versioned recipe for one node operation (`role`) on a kind of machine (`target`). Plain data: parameters
 * that depend on the request are `fromInput(...)` references, those that depend on an earlier step `fromStep(...)`.
 * The steps are resolved into `WorkflowStarted` when a workflow starts, so a running workflow never changes when the
 * profile does.
 */
export type Profile<I extends string = string> = ProfileDescriptor & { readonly id: I };

/** Defaults: 5 min timeout, 3 attempts 2 s apart, not destructive. */
export const stepDefaults = { timeoutMs: 300_000, retry: { maxAttempts: 3, backoffMs: 2_000 }, destructive: false } as const;

/** A profile, frozen; its `id` keeps its literal type. */
export function defineProfile<const I extends string>(profile: Profile<I>): Profile<I> {
  return Object.freeze(profile);
}

/** A parameter taken from the operation's inputs (`metal.deploy`'s fields) when the workflow starts. Without a default, a missing input leaves the parameter out. */
export const fromInput = (name: string, ...fallback: [unknown?]): InputRef => (fallback.length > 0 ? { $input: name, default: fallback[0] } : { $input: name });

/** A parameter taken from the output of the last earlier step with id `stepId` when this step runs (`field` is a dotted path). */
export const fromStep = (stepId: string, field: string): StepOutputRef => ({ $fromStep: stepId, field });

/** Whether a step destroys data, what it declares and which plugin runs it, as its definition (built in or registered) says. */
export type StepHomeLookup = (stepId: string) => (StepDeclarations & { readonly destructive: boolean; readonly pluginId?: string }) | undefined;

/**
 * The profile's steps with every default filled in and the input references replaced: what the workflow stores. A
 * step the profile does not mark keeps its definition's `destructive`; a profile may only add caution, never remove it.
 * What a step declares (`attests`, `records`) is the definition's alone: a profile cannot set or drop it.
 */
export function resolveSteps(profile: ProfileDescriptor, inputs: Readonly<Record<string, unknown>>, homeOf: StepHomeLookup = () => undefined): ResolvedStep[] {
  return profile.steps.map((s) => {
    const home = homeOf(s.id);
    return {
      id: s.id,
      runsOn: s.runsOn,
      params: bindInputs(s.params ?? {}, inputs),
      timeoutMs: s.timeoutMs ?? stepDefaults.timeoutMs,
      retry: { ...stepDefaults.retry, ...(s.retry ?? {}) },
      destructive: (s.destructive ?? stepDefaults.destructive) || (home?.destructive ?? false),
      ...(home?.pluginId ? { plugin: home.pluginId } : {}),
      ...(home ? declarationsOf(home) : {}),
    };
  });
}

function bindInputs(params: Record<string, unknown>, inputs: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const bound: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    const ref = InputRef.safeParse(value);
    if (!ref.success) bound[key] = value;
    else if (inputs[ref.data.$input] !== undefined) bound[key] = inputs[ref.data.$input];
    else if ('default' in ref.data) bound[key] = ref.data.default;
  }
  return bound;
}
