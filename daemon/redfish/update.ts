import type { ClientContext } from './clientContext.ts';
import { RedfishError } from './errors.ts';
import { str, type Json } from './json.ts';
import { allowableValues, findAction } from './links.ts';
import { awaitTask } from './tasks.ts';

export interface UpdateResult {
  /** null when the BMC applied the update synchronously and created no task. */
  taskUri: string | null;
  messages: string[];
}

/**
 * UpdateService.SimpleUpdate, then follows the Task to its end: the action's 202 only means "download
 * scheduled", and a failed flash is visible nowhere but in the task.
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
  const reply = await ctx.http.send('POST', action.target, body);
  const taskUri = reply.location ?? (str(reply.body.TaskState) === undefined ? undefined : str(reply.body['@odata.id']));
  if (taskUri === undefined) return { taskUri: null, messages: [] };
  const result = await awaitTask(ctx, taskUri);
  return { taskUri, messages: result.messages };
}
