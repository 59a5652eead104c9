import { isRedfishError } from './errors.ts';
import type { ClientContext } from './clientContext.ts';
import type { RedfishReply } from './http.ts';
import type { Json } from './json.ts';
import { str } from './json.ts';
import { awaitTask } from './tasks.ts';

/**
 * A write or action the BMC accepted for later (202 Accepted) is done only when its task monitor says so
 * (DSP0266 §7.9): follow it to the end, so a failed deferred action fails here and not silently later.
 */
export async function settled(ctx: ClientContext, reply: RedfishReply): Promise<RedfishReply> {
  if (reply.status !== 202) return reply;
  const monitor = reply.location ?? (str(reply.body.TaskState) === undefined ? undefined : str(reply.body['@odata.id']));
  if (monitor !== undefined) await awaitTask(ctx, monitor);
  return reply;
}

/** POSTs an action and follows its task monitor when the BMC defers it. */
export async function act(ctx: ClientContext, target: string, body: Json): Promise<RedfishReply> {
  return settled(ctx, await ctx.http.send('POST', target, body));
}

/**
 * PATCH guarded by the resource's current ETag. Some BMCs require If-Match; all of them honour it, and it stops
 * a write based on a stale read. On 412 (someone changed it in between) the resource is re-read once; on 428 from a
 * BMC that requires If-Match but publishes no ETag, `*` ("whatever is current") is sent. A deferred PATCH (202) is
 * followed to its end.
 */
export async function patchResource(ctx: ClientContext, uri: string, body: Json, etag?: string): Promise<RedfishReply> {
  const currentEtag = etag ?? (await ctx.http.get(uri)).etag;
  const patch = async (tag: string | undefined) => settled(ctx, await ctx.http.send('PATCH', uri, body, tag));
  try {
    return await patch(currentEtag);
  } catch (error) {
    if (!isRedfishError(error)) throw error;
    if (error.status === 428 && currentEtag === undefined) return patch('*');
    if (error.status !== 412) throw error;
    return patch((await ctx.http.get(uri)).etag ?? '*');
  }
}
