import type { ClientContext } from './clientContext.ts';
import { RedfishError } from './errors.ts';
import { firmwareVersions, type FirmwareVersion } from './firmware.ts';
import { str, type Json } from './json.ts';
import { allowableValues, findAction } from './links.ts';
import { pollWithin } from './poll.ts';
import { awaitTask } from './tasks.ts';

/** A firmware version that read back differently after the update. */
export interface FirmwareChange {
  id: string;
  from: string | null;
  to: string | null;
}

export interface UpdateResult {
  /** null when the BMC answered without a task (200/204: it says the update is done). */
  taskUri: string | null;
  messages: string[];
  /**
   * The versions that changed. Never empty without a task; may be empty after one, where the firmware is staged and
   * applies at the next reset (BIOS images on most BMCs).
   */
  changed: FirmwareChange[];
}

function changesBetween(before: readonly FirmwareVersion[], after: readonly FirmwareVersion[]): FirmwareChange[] {
  const was = new Map(before.map((v) => [v.source, v.version]));
  return after.filter((v) => was.has(v.source) && was.get(v.source) !== v.version).map((v) => ({ id: v.id, from: was.get(v.source) ?? null, to: v.version }));
}

/**
 * UpdateService.SimpleUpdate, verified by reading the firmware versions back. A 202 is followed to the end of its task
 * (a failed flash shows nowhere else). A BMC that answers 200 or 204 says it is done (DSP0266: only a 202 carries a
 * task monitor; sushy-tools puts a Location naming no task on its 204): then some version must read back changed
 * within `updateVerifyMs`, or the update failed (REDFISH_UPDATE_NOT_APPLIED) whatever the status said.
 */
export async function simpleUpdate(ctx: ClientContext, imageUri: string): Promise<UpdateResult> {
  let scheme: string;
  try {
    scheme = new URL(imageUri).protocol.replace(/:$/, '').toUpperCase();
  } catch (cause) {
    throw new RedfishError('REDFISH_BAD_REQUEST', 'Firmware image must be an absolute URL', { cause });
  }
  const updateService = await ctx.discovery.service('UpdateService');
  const action = findAction(updateService.body, '#UpdateService.SimpleUpdate');
  if (!action) throw new RedfishError('REDFISH_UNSUPPORTED', 'UpdateService has no #UpdateService.SimpleUpdate action');

  const body: Json = { ImageURI: imageUri };
  const protocols = await allowableValues(ctx.http, action, 'TransferProtocol');
  if (protocols !== undefined) {
    if (!protocols.includes(scheme)) {
      throw new RedfishError('REDFISH_UNSUPPORTED', `SimpleUpdate does not accept ${scheme} (allowed: ${protocols.join(', ')})`);
    }
    body.TransferProtocol = scheme;
  }
  const before = await firmwareVersions(ctx);
  const reply = await ctx.http.send('POST', action.target, body);
  const taskUri = reply.status === 202 ? (reply.location ?? (str(reply.body.TaskState) === undefined ? undefined : str(reply.body['@odata.id']))) : undefined;
  if (taskUri !== undefined) {
    const { messages } = await awaitTask(ctx, taskUri);
    return { taskUri, messages, changed: changesBetween(before, await firmwareVersions(ctx)) };
  }
  const read = await pollWithin(
    async () => changesBetween(before, await firmwareVersions(ctx)),
    (changed) => changed.length > 0,
    { intervalMs: ctx.timing.pollIntervalMs, timeoutMs: ctx.timing.updateVerifyMs },
  );
  if (!read.done) {
    throw new RedfishError(
      'REDFISH_UPDATE_NOT_APPLIED',
      `SimpleUpdate answered ${reply.status} with no task, and no firmware version changed within ${ctx.timing.updateVerifyMs} ms`,
      { status: reply.status },
    );
  }
  return { taskUri: null, messages: [], changed: read.value };
}
