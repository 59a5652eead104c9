import type { ClientContext } from './clientContext.ts';
import { patchResource } from './context.ts';
import { RedfishError } from './errors.ts';
import type { RedfishResource } from './http.ts';
import { linkOf, obj } from './json.ts';
import { requireLink } from './links.ts';

export type BiosAttributeValue = string | number | boolean | null;
export type BiosAttributes = Record<string, BiosAttributeValue>;

export interface BiosWriteResult {
  /** Where the attributes were written; they take effect on the next reset. */
  settingsUri: string;
}

async function biosResource(ctx: ClientContext): Promise<RedfishResource> {
  const system = await ctx.discovery.system();
  return ctx.http.get(requireLink(system.body, 'a Bios resource', 'Bios'));
}

function attributesOf(resource: RedfishResource): BiosAttributes {
  const attributes: BiosAttributes = {};
  for (const [name, value] of Object.entries(obj(resource.body.Attributes))) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) attributes[name] = value as BiosAttributeValue;
  }
  return attributes;
}

/** The attributes currently in effect (not pending ones). */
export async function getBiosAttributes(ctx: ClientContext): Promise<BiosAttributes> {
  return attributesOf(await biosResource(ctx));
}

/**
 * Writes to the `@Redfish.Settings` SettingsObject (the Bios resource itself is read-only on most BMCs; iLO's
 * is `/redfish/v1/systems/1/bios/settings/`). Changes apply at the next reset, which the caller schedules.
 */
export async function setBiosAttributes(ctx: ClientContext, attrs: BiosAttributes): Promise<BiosWriteResult> {
  const bios = await biosResource(ctx);
  const known = attributesOf(bios);
  const unknown = Object.keys(attrs).filter((name) => !(name in known));
  if (unknown.length > 0) {
    // Checked up front so a typo fails before anything is written, and the message names the culprit.
    throw new RedfishError('REDFISH_BAD_REQUEST', `Unknown BIOS attribute(s): ${unknown.join(', ')}`);
  }
  const settingsUri = linkOf(bios.body, '@Redfish.Settings', 'SettingsObject') ?? bios.uri;
  await patchResource(ctx, settingsUri, { Attributes: attrs }, settingsUri === bios.uri ? bios.etag : undefined);
  return { settingsUri };
}
