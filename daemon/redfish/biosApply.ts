import type { ClientContext } from './clientContext.ts';
import { getBiosAttributes, setBiosAttributes, type BiosAttributes, type BiosAttributeValue } from './bios.ts';
import { RedfishError } from './errors.ts';
import { pollWithin } from './poll.ts';
import { getPowerState, setPower } from './power.ts';

export interface BiosApplyResult {
  /** false when every attribute already had its value: nothing was written and the machine was not reset. */
  changed: boolean;
  /** The requested attributes as the BIOS now reports them. */
  attributes: BiosAttributes;
  /** ResetTypes sent to apply them. */
  resetTypes: string[];
}

/** A `Name=Value` string takes the type the attribute has on the BMC; typed values must already match it. */
function coerce(name: string, value: BiosAttributeValue, current: BiosAttributeValue | undefined): BiosAttributeValue {
  if (typeof value !== 'string' || current === undefined || current === null || typeof current === 'string') return value;
  if (typeof current === 'number' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (typeof current === 'boolean' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw new RedfishError('REDFISH_BAD_REQUEST', `BIOS attribute ${name} takes a ${typeof current}, not "${value}"`);
}

const pick = (attrs: BiosAttributes, names: readonly string[]): BiosAttributes => Object.fromEntries(names.map((n) => [n, attrs[n] ?? null]));

/**
 * Applies BIOS settings the way firmware takes them: written as pending settings, taken in during the POST of the next
 * reset, and only then readable as current. So this writes the pending settings, resets the machine (powering it on
 * when it was off, and off again afterwards), and reads the attributes until every one shows its new value — else
 * `REDFISH_BIOS_NOT_APPLIED` names those that did not. Attributes that already hold their value cause no reset.
 */
export async function applyBiosSettings(ctx: ClientContext, wanted: BiosAttributes): Promise<BiosApplyResult> {
  const names = Object.keys(wanted);
  // Nothing asked: the BMC is not even read (a profile's optional BIOS step on a machine without a Bios resource).
  if (names.length === 0) return { changed: false, attributes: {}, resetTypes: [] };
  const current = await getBiosAttributes(ctx);
  const typed: BiosAttributes = Object.fromEntries(names.map((n) => [n, coerce(n, wanted[n]!, current[n])]));
  const pending = names.filter((n) => current[n] !== typed[n]);
  if (pending.length === 0) return { changed: false, attributes: pick(current, names), resetTypes: [] };

  // Unknown names and wrong types are refused here, before anything is written.
  await setBiosAttributes(ctx, pick(typed, pending));
  const wasOn = (await getPowerState(ctx)) !== 'Off';
  const resetTypes = [...(await setPower(ctx, wasOn ? 'cycle' : 'on')).resetTypes];
  const applied = await pollWithin(
    () => getBiosAttributes(ctx),
    (attrs) => pending.every((n) => attrs[n] === typed[n]),
    {
      intervalMs: ctx.timing.pollIntervalMs,
      timeoutMs: ctx.timing.powerTimeoutMs,
    },
  );
  if (!applied.done) {
    const missing = pending.filter((n) => applied.value[n] !== typed[n]);
    throw new RedfishError('REDFISH_BIOS_NOT_APPLIED', `BIOS attribute(s) ${missing.join(', ')} kept their old value after ${resetTypes.join(', ')}`);
  }
  if (!wasOn) resetTypes.push(...(await setPower(ctx, 'off')).resetTypes);
  return { changed: true, attributes: pick(applied.value, names), resetTypes };
}
