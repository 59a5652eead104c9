import type { BootMode, ClientContext } from './clientContext.ts';
import { patchResource } from './context.ts';
import { isRedfishError, RedfishError } from './errors.ts';
import { linkOf, obj, str, strings, type Json } from './json.ts';
import { optional } from './links.ts';
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

export interface BootClearResult {
  /** false when no override was armed. */
  changed: boolean;
  /** The override as it was. */
  before: { target: string | null; enabled: string | null };
}

/**
 * BIOS attributes that hold the firmware's boot mode, by vendor: `BootMode` (HPE iLO `Uefi`/`LegacyBios`, Dell
 * `Uefi`/`Bios`, the DMTF mockup), `BootModeSelect` (Supermicro), `FBO001` (AMI Aptio on Gigabyte boards: "Boot mode
 * select", `LEGACY`/`UEFI`, in the H262 tree's attribute registry), `BootModes_SystemBootMode` (Lenovo XClarity).
 */
const biosBootModeAttributes = ['BootMode', 'BootModeSelect', 'FBO001', 'BootModes_SystemBootMode'];

function bootModeOf(value: unknown): BootMode | undefined {
  if (typeof value !== 'string') return undefined;
  if (/uefi/i.test(value)) return 'UEFI';
  return /legacy|^bios$/i.test(value) ? 'Legacy' : undefined;
}

/**
 * The boot mode the BIOS is set to, where an attribute says so. `BootSourceOverrideMode` is no witness: the H262's AMI
 * BMC reads `Legacy` there while its BIOS boots UEFI.
 */
async function biosBootMode(ctx: ClientContext, system: Json): Promise<BootMode | undefined> {
  const biosUri = linkOf(system, 'Bios');
  const attributes = biosUri === undefined ? {} : obj((await optional(() => ctx.http.get(biosUri)))?.body.Attributes);
  return biosBootModeAttributes.map((name) => bootModeOf(attributes[name])).find((mode) => mode !== undefined);
}

/**
 * Arms a boot override that the next power-on or reset consumes (`BootSourceOverrideEnabled: Once`), in the boot mode
 * asked for (the command's, else the node's, else the one the BIOS reports; else the BMC's is left as it is) where
 * the BMC lets a client set it. BMCs differ in what they report
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
  const wantedMode = target === 'UefiHttp' ? 'UEFI' : (mode ?? ctx.bootMode ?? (await biosBootMode(ctx, system.body)));
  const modes = boot['BootSourceOverrideMode@Redfish.AllowableValues'];
  const modeSettable = wantedMode !== undefined && 'BootSourceOverrideMode' in boot && (!Array.isArray(modes) || strings(modes).includes(wantedMode));
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

/**
 * Ends the boot override: `BootSourceOverrideEnabled: Disabled`, and the target back to `None` where the BMC lists it.
 * A BMC that keeps a `Once` request as `Continuous` (AMI MegaRAC) would otherwise boot the network or the CD at every
 * restart after the workflow. Read back like an arm; an override that stays armed is REDFISH_BOOT_OVERRIDE_MISMATCH.
 */
export async function clearBootOverride(ctx: ClientContext): Promise<BootClearResult> {
  const system = await ctx.discovery.system();
  const boot = obj(system.body.Boot);
  const before = { target: str(boot.BootSourceOverrideTarget) ?? null, enabled: str(boot.BootSourceOverrideEnabled) ?? null };
  const ended = (b: Json) =>
    b.BootSourceOverrideEnabled === 'Disabled' || (b.BootSourceOverrideEnabled === undefined && [undefined, 'None'].includes(str(b.BootSourceOverrideTarget)));
  if (ended(boot)) return { changed: false, before };
  const patch: Json = { BootSourceOverrideEnabled: 'Disabled' };
  const targets = boot['BootSourceOverrideTarget@Redfish.AllowableValues'];
  if (!Array.isArray(targets) || strings(targets).includes('None')) patch.BootSourceOverrideTarget = 'None';
  await patchResource(ctx, system.uri, { Boot: patch }, system.etag);
  const shown = await pollWithin(async () => obj((await ctx.discovery.system()).body.Boot), ended, {
    intervalMs: ctx.timing.pollIntervalMs,
    timeoutMs: ctx.timing.bootVerifyMs,
  });
  if (!shown.done) {
    const after = shown.value;
    throw new RedfishError(
      'REDFISH_BOOT_OVERRIDE_MISMATCH',
      `BMC accepted the end of the boot override but still reports ${str(after.BootSourceOverrideEnabled) ?? '?'} ${str(after.BootSourceOverrideTarget) ?? '?'} after ${ctx.timing.bootVerifyMs} ms`,
    );
  }
  return { changed: true, before };
}
