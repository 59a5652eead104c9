import { declarationsOf, type StepDeclarations } from '../../schemas/metal/stepDeclarations.ts';
import type { StepRunsOn } from '../../schemas/metal/workflow.ts';
import { ProfileDescriptor, StepOutputRef } from '../../schemas/plugins/registration.ts';
import type { ProfileIssue } from '../../schemas/plugins/views.ts';
import { builtinProfileCatalog } from '../metal/profiles/builtin.ts';
import { builtinSteps } from './builtinSteps.ts';
import type { StepHomeLookup } from '../../plugins/sdk/defineProfile.ts';
import type { PluginRegistryState } from './registry/registry.ts';

/** A step's definition as the catalog knows it; its declarations (`attests`, `records`) are frozen into each workflow. */
export interface StepHome extends StepDeclarations {
  readonly runsOn: StepRunsOn;
  readonly destructive: boolean;
  /** Absent for a built-in step. */
  readonly pluginId?: string;
}

/** Where a step id is implemented: built in, or by the plugin that registered it. */
export function stepHome(registry: PluginRegistryState, stepId: string): StepHome | undefined {
  const builtin = builtinSteps.get(stepId);
  if (builtin) return { runsOn: builtin.runsOn, destructive: builtin.destructive, ...declarationsOf(builtin) };
  for (const plugin of registry.plugins.values()) {
    const step = plugin.steps.find((s) => s.id === stepId);
    if (step) return { runsOn: step.runsOn, destructive: step.destructive, ...declarationsOf(step), pluginId: plugin.pluginId };
  }
  return undefined;
}

export const stepHomes =
  (registry: PluginRegistryState): StepHomeLookup =>
  (stepId) =>
    stepHome(registry, stepId);

/** Every profile that can be chosen: the built-in ones, then each plugin's. */
export function allProfiles(registry: PluginRegistryState): { profile: ProfileDescriptor; pluginId: string | null }[] {
  return [
    ...builtinProfileCatalog.map((profile) => ({ profile, pluginId: null })),
    ...[...registry.plugins.values()].flatMap((p) => p.profiles.map((profile) => ({ profile, pluginId: p.pluginId }))),
  ];
}

export function findProfile(registry: PluginRegistryState, profileId: string): ProfileDescriptor | undefined {
  return allProfiles(registry).find((p) => p.profile.id === profileId)?.profile;
}

/**
 * What `profiles.validate` and `workflow.start` check: every step resolves to a built-in or registered step that runs
 * where the profile says, and every `fromStep` names an earlier step. Returns the issues; none means valid.
 */
export function validateProfile(registry: PluginRegistryState, candidate: unknown): ProfileIssue[] {
  const parsed = ProfileDescriptor.safeParse(candidate);
  if (!parsed.success) return [{ stepIndex: null, stepId: null, code: 'INVALID', message: parsed.error.message }];
  const issues: ProfileIssue[] = [];
  parsed.data.steps.forEach((step, stepIndex) => {
    const home = stepHome(registry, step.id);
    if (!home) issues.push({ stepIndex, stepId: step.id, code: 'STEP_UNKNOWN', message: `no built-in or registered step "${step.id}"` });
    else if (home.runsOn !== step.runsOn) {
      issues.push({
        stepIndex,
        stepId: step.id,
        code: 'RUNS_ON_MISMATCH',
        message: `step "${step.id}" runs on ${home.runsOn}, the profile says ${step.runsOn}`,
      });
    }
    for (const [param, value] of Object.entries(step.params ?? {})) {
      const ref = StepOutputRef.safeParse(value);
      if (ref.success && !parsed.data.steps.slice(0, stepIndex).some((earlier) => earlier.id === ref.data.$fromStep)) {
        issues.push({
          stepIndex,
          stepId: step.id,
          code: 'FROM_STEP_UNKNOWN',
          message: `param "${param}" takes the output of "${ref.data.$fromStep}", which does not run before it`,
        });
      }
    }
  });
  return issues;
}
