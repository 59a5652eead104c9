/**
 * The public entry of Better Compute's extension SDK (`better-compute/sdk`): what a third party writes steps and
 * profiles with, without importing the platform's internals. The built-in steps and profiles are defined with the
 * same functions (`services/plugins/builtinSteps.ts`, `services/metal/profiles/builtin.ts`).
 *
 * A plugin bundles steps, profiles, providers and drivers (`definePlugin({ steps, profiles, … })`) and runs as its
 * own consumer service (`runPlugin` from the second entry `better-compute/sdk/worker`, or `better-compute plugin run
 * <module>`): it registers what it brings and takes its steps' work from its own durable consumer. A plugin may also bring fleet
 * autonomy: sensors (`defineSensor`), bindings of their signals to intervention categories (`defineBinding`), the
 * categories it declares (`policies`) and remediation profiles (`remediateWith(profile)` runs one as
 * `metal.remediate`). See docs/writing-a-plugin.md.
 * This entry imports only the contract (`schemas/`) and the base layer: the layer check keeps it so.
 */
import type { HttpProxyAnswer } from '../../schemas/agent/httpProxy.ts';
import type { HttpProxyRequestInput, StepContext } from './defineStep.ts';

export { defineStep } from './defineStep.ts';
export type { StepAttests, StepRecords } from '../../schemas/metal/stepDeclarations.ts';
export type { AgentEndpoints, StepContext, StepDefinition, StepInstance, StepNode, StepPlatform, StepSpec, HttpProxyRequestInput } from './defineStep.ts';
export { defineProfile, fromInput, fromStep, stepDefaults } from './defineProfile.ts';
export type { Profile, ProfileStep } from './defineProfile.ts';
export type { StepBlobs, StepPki, StepSecrets } from './stepFacilities.ts';
export { buildIso9660, Iso9660Error } from './iso9660.ts';
export type { Iso9660File, Iso9660Spec } from './iso9660.ts';
export { defineSensor, defaultSensorSettings } from './defineSensor.ts';
export type { Sensor, SensorSettings } from './defineSensor.ts';
export { defineBinding, noRemediation, remediateWith } from './defineBinding.ts';
export type { Binding } from './defineBinding.ts';
export type { FleetSnapshot } from '../../schemas/autonomy/snapshot.ts';
export type { Signal } from '../../schemas/autonomy/signals.ts';
export type { PolicyDeclaration } from '../../schemas/autonomy/policies.ts';
export { definePlugin } from './definePlugin.ts';
export type { PluginDefinition, PluginSpec } from './definePlugin.ts';
export {
  defineProvider,
  connectProvider,
  clientTokenOf,
  ProviderError,
  ProviderErrorKind,
  classifyHttpFailure,
  classifyFetchFailure,
  withTransientRetry,
} from './provider.ts';
export { callProviderApi, readAnswer } from './providerApi.ts';
export type { ClassifyApiFailure, ProviderApiRequest } from './providerApi.ts';
export { providerConformanceCases, runConformance } from './providerConformance.ts';
export { runCommand } from './providerCommands.ts';
export type { CommandResult, ProviderCommand, RunCommand } from './providerCommands.ts';
export type {
  ProviderClient,
  ProviderContext,
  ProviderDefinition,
  ProviderErrorCode,
  TransientRetryOptions,
  ProviderInstance,
  ProviderInstanceSpec,
  ProviderInstanceState,
  ProviderOffer,
} from './provider.ts';
export type { ConformanceCase, ConformanceHarness, ConformanceReport, ConformanceResult, ConformanceSubject } from './providerConformance.ts';
export { RetryableError, StepNotReadyError, TerminalError, stepNotReady } from './stepErrors.ts';
export type { HttpProxyAnswer } from '../../schemas/agent/httpProxy.ts';

/**
 * One HTTP request to the step's node through its site agent (`site.httpProxy`): only to an address recorded for the
 * node, by IP, https pinned by `tlsSpkiSha256` (plain http only on the site's provisioning networks), secrets only as
 * `secretHeaders` references. With `poll: true` it returns the newest settled answer under `key` (null while none)
 * and sends the next request; combine with `stepNotReady` to wait for a machine's API.
 */
export function httpViaSite(ctx: StepContext<unknown>, request: HttpProxyRequestInput): Promise<HttpProxyAnswer | null> {
  return ctx.platform.httpViaSite(request);
}
