import type { ClientContext } from './clientContext.ts';
import { patchResource } from './context.ts';
import { RedfishError } from './errors.ts';
import { isObject, type Json } from './json.ts';
import { optional } from './links.ts';
import { pollWithin } from './poll.ts';

/**
 * Manager settings that keep virtual media off until a client turns them on, by where they sit in the Manager
 * resource and the value that means "on". Matched by the property being there, not by vendor name, so a family that
 * needs the same switch elsewhere is one more line here.
 */
export const remoteMediaSwitches: readonly { family: string; path: readonly string[]; on: string }[] = [
  // AMI MegaRAC (ASRock Rack, Gigabyte and others): "Remote Media Support" in the web UI.
  { family: 'AMI MegaRAC', path: ['Oem', 'Ami', 'VirtualMedia', 'RMediaStatus'], on: 'Enabled' },
];

function valueAt(doc: Json, path: readonly string[]): unknown {
  let node: unknown = doc;
  for (const name of path) node = isObject(node) ? node[name] : undefined;
  return node;
}

function nested(path: readonly string[], value: unknown): Json {
  return path.reduceRight<Json>((inner, name, i) => ({ [name]: i === path.length - 1 ? value : inner }), {});
}

/** Turns on every remote-media switch our system's managers have and that is off, and waits until each reads on. */
export async function enableRemoteMedia(ctx: ClientContext): Promise<void> {
  for (const managerUri of await ctx.discovery.managers()) {
    const manager = await optional(() => ctx.http.get(managerUri));
    if (!manager) continue;
    for (const { family, path, on } of remoteMediaSwitches) {
      const current = valueAt(manager.body, path);
      if (current === undefined || current === on) continue;
      await patchResource(ctx, manager.uri, nested(path, on), manager.etag);
      const shown = await pollWithin(
        async () => valueAt((await ctx.http.get(manager.uri)).body, path),
        (v) => v === on,
        {
          intervalMs: ctx.timing.pollIntervalMs,
          timeoutMs: ctx.timing.mediaTimeoutMs,
        },
      );
      if (!shown.done) throw new RedfishError('REDFISH_UNSUPPORTED', `${family} remote media stays ${String(shown.value)} at ${manager.uri}`);
    }
  }
}
