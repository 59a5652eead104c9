/**
 * The public entry of Better Compute's extension SDK (`better-compute/sdk`): what a third party writes steps and
 * profiles with, without importing the platform's internals. The built-in steps and profiles are defined with the
 * same functions (`services/workflow/builtinSteps.ts`, `services/metal/profiles/builtin.ts`).
 *
 * Running a plugin as its own consumer service (`runPlugin`, registration, its own work subjects) comes with the
 * plugin runtime; today these definitions run inside the platform's executor.
 */
import type { HttpProxyAnswer } from '../../schemas/agent/httpProxy.ts';
import type { HttpProxyRequestInput, StepContext } from '../../services/workflow/defineStep.ts';

export { defineStep } from '../../services/workflow/defineStep.ts';
export type { StepContext, StepDefinition, StepNode, StepPlatform, StepSpec, HttpProxyRequestInput } from '../../services/workflow/defineStep.ts';
export { defineProfile } from '../../services/workflow/defineProfile.ts';
export type { Profile, ProfileStep } from '../../services/workflow/defineProfile.ts';
export { RetryableError, StepNotReadyError, TerminalError, stepNotReady } from '../../services/workflow/stepErrors.ts';
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
