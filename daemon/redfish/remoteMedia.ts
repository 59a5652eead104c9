import type { ClientContext } from './clientContext.ts';
import { act } from './context.ts';
import type { RedfishResource } from './http.ts';
import { isObject, obj, str } from './json.ts';
import { allowableValues, findOemAction, optional, type ActionRef } from './links.ts';

/**
 * AMI MegaRAC keeps virtual media off until the manager's OEM action `EnableRMedia` runs with `RMediaState: Enable`
 * (`#VirtualMedia.EnableRMedia` in the Gigabyte H262 tree, `#AMIVirtualMedia.EnableRMedia` on later firmware). Until
 * then its VirtualMedia collection lists no CD slot: the action's ActionInfo says "CD Media instances will be displayed
 * under VirtualMedia collection only when RMedia support is enabled". Some firmware also reports the state, read-only,
 * as `Oem.<Vendor>.VirtualMedia.RMediaStatus`; the H262 tree has no such property.
 */
const SWITCH_ACTION = 'EnableRMedia';
const SWITCH_PARAMETER = 'RMediaState';

interface RemoteMediaSwitch {
  action: ActionRef;
  /** `RMediaStatus` where the firmware reports it; undefined where it does not. */
  status: string | undefined;
}

function reportedStatus(manager: RedfishResource): string | undefined {
  for (const vendor of Object.values(obj(manager.body.Oem))) {
    const media = isObject(vendor) ? obj(vendor.VirtualMedia) : {};
    const status = str(media.RMediaStatus);
    if (status !== undefined) return status;
  }
  return undefined;
}

/** The remote-media switches of our system's own managers. */
async function switches(ctx: ClientContext): Promise<RemoteMediaSwitch[]> {
  const found: RemoteMediaSwitch[] = [];
  for (const uri of await ctx.discovery.managers()) {
    const manager = await optional(() => ctx.http.get(uri));
    const action = manager ? findOemAction(manager.body, SWITCH_ACTION) : undefined;
    if (manager && action) found.push({ action, status: reportedStatus(manager) });
  }
  return found;
}

/**
 * Turns remote media on where a manager of our system has the switch and it is off: off as `RMediaStatus` reports it,
 * or, where the firmware reports nothing, because no CD slot shows (`slotShown`). Returns whether it switched anything;
 * the slots then take a moment to appear (the BMC restarts its media service).
 */
export async function enableRemoteMedia(ctx: ClientContext, slotShown: boolean): Promise<boolean> {
  let switched = false;
  for (const { action, status } of await switches(ctx)) {
    const off = status === undefined ? !slotShown : status !== 'Enabled';
    if (!off) continue;
    const values = (await allowableValues(ctx.http, action, SWITCH_PARAMETER)) ?? [];
    await act(ctx, action.target, { [SWITCH_PARAMETER]: values.find((v) => /^enable/i.test(v)) ?? 'Enable' });
    switched = true;
  }
  return switched;
}

/** Whether a manager of our system has remote media switched off, so that nothing can be mounted on it. */
export async function remoteMediaOff(ctx: ClientContext): Promise<boolean> {
  return (await switches(ctx)).some(({ status }) => status !== 'Enabled');
}
