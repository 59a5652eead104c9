import type { HardwareProfile } from '../../schemas/metal/hardwareProfile.ts';
import type { DriverDescriptor, PluginRegistration } from '../../schemas/plugins/registration.ts';
import type { PolicyDeclaration } from '../../schemas/autonomy/policies.ts';
import { declarationsOf } from '../../schemas/metal/stepDeclarations.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Binding } from './defineBinding.ts';
import { providerManifestOf } from './providerManifest.ts';
import type { Profile } from './defineProfile.ts';
import type { Sensor } from './defineSensor.ts';
import type { StepDefinition } from './defineStep.ts';

/** What a plugin brings besides steps and profiles: anything with an id the control plane lists (providers, drivers). */
export interface NamedExtension {
  readonly id: string;
}

/**
 * A plugin: the unit a third party ships and runs as its own service (`runPlugin`). `steps` are its steps (their
 * work comes to its replicas only), `profiles` chain its steps with built-in ones, `providers` are VPS providers
 * (`defineProvider`), `drivers` are listed by `drivers.list`. `sensors`, `bindings` and `policies` (intervention
 * categories) join fleet autonomy: `fleet-sensors` and `autonomy-engine` load them from the same modules.
 */
export interface PluginDefinition<Id extends string = string> {
  readonly id: Id;
  /** Semantic version, recorded with every registration. */
  readonly version: string;
  readonly steps: readonly StepDefinition<string, any, any>[];
  readonly profiles: readonly Profile[];
  readonly providers: readonly NamedExtension[];
  readonly drivers: readonly DriverDescriptor[];
  readonly sensors: readonly Sensor[];
  readonly bindings: readonly Binding[];
  /**
   * The intervention categories this plugin declares, each once: its owner (what `autonomy.pause` names), default
   * disposition, destructive or advisory, and whether it is an advancement (longer cooldown). Registered with the
   * plugin, so `autonomy.setPolicy` and `autonomy.pause` accept them; a category built in or declared by another
   * plugin is refused at registration (`ALREADY_EXISTS`).
   */
  readonly policies: readonly PolicyDeclaration[];
  /**
   * Kinds of machine this plugin knows how to drive (`{ id, description, drivers: { power, management, boot, deploy } }`):
   * enrolments and pools may name them once the plugin registered; a name built in or another's is refused.
   */
  readonly hardwareProfiles?: readonly HardwareProfile[];
}

export type PluginSpec<Id extends string> = Pick<PluginDefinition<Id>, 'id' | 'version'> &
  Partial<Omit<PluginDefinition<Id>, 'id' | 'version'>> & {
    /** @deprecated The old name of `steps`; `definePlugin` reads it as `steps` (giving both is an error). */
    readonly extensions?: readonly StepDefinition<string, any, any>[];
  };

/**
 * A plugin, with empty lists for what it leaves out, frozen; its `id` keeps its literal type. The one place the
 * deprecated `extensions` becomes `steps`: nothing else reads it.
 */
export function definePlugin<const Id extends string>(plugin: PluginSpec<Id>): PluginDefinition<Id> {
  const { extensions, ...spec } = plugin;
  if (extensions && spec.steps)
    throw new PlatformError('VALIDATION_FAILED', `plugin ${plugin.id}: give its steps as \`steps\` only (\`extensions\` is its old name)`);
  const steps = spec.steps ?? extensions ?? [];
  return Object.freeze({ profiles: [], providers: [], drivers: [], sensors: [], bindings: [], policies: [], ...spec, steps });
}

/** What a plugin process announces (`plugins.register`): descriptors only, nothing that runs. */
export function registrationOf(plugin: PluginDefinition): PluginRegistration {
  return {
    pluginId: plugin.id,
    version: plugin.version,
    steps: plugin.steps.map((s) => ({
      id: s.id,
      runsOn: s.runsOn,
      destructive: s.destructive,
      sends: [...s.sends],
      relays: [...s.relays],
      ...declarationsOf(s),
    })),
    profiles: plugin.profiles.map((p) => ({ id: p.id, version: p.version, target: p.target, role: p.role, steps: [...p.steps] })),
    drivers: plugin.drivers.map((d) => ({ ...d })),
    // Each provider's account shape goes with it: the control plane checks accounts against it without running plugin code.
    providers: plugin.providers.map(providerManifestOf),
    // The categories are data: the control plane checks operators' policy and pause commands against them.
    policies: plugin.policies.map((p) => ({ ...p })),
    ...(plugin.hardwareProfiles?.length ? { hardwareProfiles: plugin.hardwareProfiles.map((p) => ({ ...p, drivers: { ...p.drivers } })) } : {}),
  };
}
