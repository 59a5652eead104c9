import type { BootMode, ClientContext } from './clientContext.ts';
import { patchResource } from './context.ts';
import { isRedfishError, RedfishError } from './errors.ts';
import { obj, str, strings, type Json } from './json.ts';
import { pollWithin } from './poll.ts';

export const OneTimeBootTargets = ['Pxe', 'Cd', 'UefiHttp'] as const;
export type OneTimeBootTarget = (typeof OneTimeBootTargets)[number];
export type { BootMode } from './clientContext.ts';

export interface BootOverrideResult {
  target: OneTimeBootTarget;
  /** What the BMC reports once the target shows: `Once`, or `Continuous` on BMCs that turn a one-time request into that. */
  enabled: string | null;
  /** The override's boot mode as the BMC reports it; null when it has none. */
  mode: string | null;
}

/** AMI boards (MegaRAC) ship in Legacy mode; every other family defaults to UEFI. */
async function defaultMode(ctx: ClientContext): Promise<BootMode> {
  const family = await ctx.discovery.family();
  return family !== undefined && /^(ami|american megatrends)/.test(family) ? 'Legacy' : 'UEFI';
}

/**
 * Arms a boot override that the next power-on or reset consumes (`BootSourceOverrideEnabled: Once`), in the boot mode
 * asked for (the node's, else the family default) where the BMC lets a client set it. BMCs differ in what they report
 * after: some show `Continuous` for a `Once` request, some arm it later (202 and a task, or just later), some answer 200
 * and ignore it. So the override is read back for up to `bootVerifyMs`, and the step fails
 * (`REDFISH_BOOT_OVERRIDE_MISMATCH`) only when the target itself is not the one asked for.
 */
export async function setOneTimeBoot(ctx: ClientContext, target: OneTimeBootTarget, mode?: BootMode): Promise<BootOverrideResult> {
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
  // HTTP boot exists only in UEFI mode.
  const wantedMode = target === 'UefiHttp' ? 'UEFI' : (mode ?? ctx.bootMode ?? (await defaultMode(ctx)));
  const modes = boot['BootSourceOverrideMode@Redfish.AllowableValues'];
  const modeSettable = 'BootSourceOverrideMode' in boot && (!Array.isArray(modes) || strings(modes).includes(wantedMode));
  if (modeSettable && boot.BootSourceOverrideMode !== wantedMode) patch.BootSourceOverrideMode = wantedMode;
  try {
    await patchResource(ctx, system.uri, { Boot: patch }, system.etag);
  } catch (error) {
    // Some BMCs list the mode but refuse to have it written: the override itself still matters more.
    if (!('BootSourceOverrideMode' in patch) || !isRedfishError(error, 'REDFISH_BAD_REQUEST')) throw error;
    delete patch.BootSourceOverrideMode;
    await patchResource(ctx, system.uri, { Boot: patch });
  }

  const shown = await pollWithin(
    async () => obj((await ctx.discovery.system()).body.Boot),
    (b) => b.BootSourceOverrideTarget === target && (b.BootSourceOverrideEnabled === 'Once' || b.BootSourceOverrideEnabled === 'Continuous'),
    { intervalMs: ctx.timing.pollIntervalMs, timeoutMs: ctx.timing.bootVerifyMs },
  );
  const after = shown.value;
  if (after.BootSourceOverrideTarget !== target) {
    throw new RedfishError(
      'REDFISH_BOOT_OVERRIDE_MISMATCH',
      `BMC accepted the ${target} boot override but reports target ${str(after.BootSourceOverrideTarget) ?? 'none'} after ${ctx.timing.bootVerifyMs} ms`,
    );
  }
  return { target, enabled: str(after.BootSourceOverrideEnabled) ?? null, mode: str(after.BootSourceOverrideMode) ?? null };
}
