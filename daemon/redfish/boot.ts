import { patchResource, type ClientContext } from './context.ts';
import { RedfishError } from './errors.ts';
import { obj, strings, type Json } from './json.ts';

export const OneTimeBootTargets = ['Pxe', 'Cd', 'UefiHttp'] as const;
export type OneTimeBootTarget = (typeof OneTimeBootTargets)[number];

/**
 * Arms a boot override that the next power-on or reset consumes (`BootSourceOverrideEnabled: Once`). Some BMCs
 * answer 200 to an override they then ignore, so the override is read back before reporting success.
 */
export async function setOneTimeBoot(ctx: ClientContext, target: OneTimeBootTarget): Promise<void> {
  if (!(OneTimeBootTargets as readonly string[]).includes(target)) {
    throw new RedfishError('REDFISH_BAD_REQUEST', `Unknown boot target ${String(target)}`);
  }
  const system = await ctx.discovery.system();
  const boot = obj(system.body.Boot);
  const declared = boot['BootSourceOverrideTarget@Redfish.AllowableValues'];
  if (Array.isArray(declared) && !strings(declared).includes(target)) {
    throw new RedfishError('REDFISH_UNSUPPORTED', `BMC does not allow boot override target ${target}`);
  }
  const patch: Json = { BootSourceOverrideTarget: target, BootSourceOverrideEnabled: 'Once' };
  // HTTP boot exists only in UEFI mode; Pxe and Cd keep whatever mode the machine is set to.
  if (target === 'UefiHttp' && 'BootSourceOverrideMode' in boot) patch.BootSourceOverrideMode = 'UEFI';
  await patchResource(ctx, system.uri, { Boot: patch }, system.etag);

  const after = obj((await ctx.discovery.system()).body.Boot);
  if (after.BootSourceOverrideTarget !== target || after.BootSourceOverrideEnabled !== 'Once') {
    throw new RedfishError('REDFISH_BAD_REQUEST', `BMC accepted the ${target} boot override but does not report it armed`);
  }
}
