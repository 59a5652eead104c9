import { isRedfishError } from './errors.ts';
import type { Discovery } from './discovery.ts';
import type { RedfishHttp, RedfishReply } from './http.ts';
import type { Json } from './json.ts';

export interface RedfishTiming {
  pollIntervalMs: number;
  powerTimeoutMs: number;
  mediaTimeoutMs: number;
  taskTimeoutMs: number;
}

/** What every operation module needs: the authenticated HTTP layer, link discovery and the wait budgets. */
export interface ClientContext {
  http: RedfishHttp;
  discovery: Discovery;
  timing: RedfishTiming;
}

/**
 * PATCH guarded by the resource's current ETag. Some BMCs require If-Match; all of them honour it, and it stops
 * a write based on a stale read. On 412 (someone changed it in between) the resource is re-read once.
 */
export async function patchResource(ctx: ClientContext, uri: string, body: Json, etag?: string): Promise<RedfishReply> {
  const currentEtag = etag ?? (await ctx.http.get(uri)).etag;
  try {
    return await ctx.http.send('PATCH', uri, body, currentEtag);
  } catch (error) {
    if (!isRedfishError(error) || error.status !== 412) throw error;
    return ctx.http.send('PATCH', uri, body, (await ctx.http.get(uri)).etag);
  }
}
