import type { ClientContext } from './clientContext.ts';
import { act, patchResource } from './context.ts';
import { isRedfishError, RedfishError } from './errors.ts';
import type { RedfishResource } from './http.ts';
import { str, strings, type Json } from './json.ts';
import { allowableValues, findAction, findOemAction } from './links.ts';
import { pollUntil, pollWithin } from './poll.ts';
import { enableRemoteMedia, remoteMediaOff } from './remoteMedia.ts';

export interface MediaResult {
  /** false when the slot already held exactly this image (insert) or nothing (eject). */
  changed: boolean;
  mediaUri: string;
}

/** An eject's result: `mediaUri` is null when remote media is switched off (AMI MegaRAC) and so no slot exists. */
export type EjectResult = Omit<MediaResult, 'mediaUri'> & { mediaUri: string | null };

function isInserted(media: Json): boolean {
  if (typeof media.Inserted === 'boolean') return media.Inserted;
  return typeof media.Image === 'string' && media.Image !== '';
}

/**
 * The slot a host can boot an ISO from, among our system's own slots: one whose MediaTypes include CD or DVD, else one
 * that lists no MediaTypes at all (AMI MegaRAC lists none; its CD slot is the one named so, else the first).
 */
async function findCdMedia(ctx: ClientContext): Promise<RedfishResource | undefined> {
  const untyped: RedfishResource[] = [];
  for (const uri of await ctx.discovery.virtualMediaUris()) {
    const media = await ctx.http.get(uri);
    const types = strings(media.body.MediaTypes);
    if (types.includes('CD') || types.includes('DVD')) return media;
    if (types.length === 0) untyped.push(media);
  }
  return untyped.find((m) => /cd|dvd/i.test(`${str(m.body.Id) ?? ''} ${str(m.body.Name) ?? ''}`)) ?? untyped[0];
}

const noCdMedia = () => new RedfishError('REDFISH_UNSUPPORTED', 'BMC has no CD/DVD virtual media for this system');

/** The CD slot, after switching remote media on where the BMC keeps it off (the slot may appear only then). */
async function cdMediaSwitchedOn(ctx: ClientContext): Promise<RedfishResource> {
  const shown = await findCdMedia(ctx);
  if (!(await enableRemoteMedia(ctx, shown !== undefined))) {
    if (!shown) throw noCdMedia();
    return shown;
  }
  const appeared = await pollWithin(
    () => findCdMedia(ctx),
    (m) => m !== undefined,
    {
      intervalMs: ctx.timing.pollIntervalMs,
      timeoutMs: ctx.timing.mediaTimeoutMs,
    },
  );
  if (!appeared.value) throw new RedfishError('REDFISH_UNSUPPORTED', 'Remote media was switched on but no CD/DVD slot appeared');
  return appeared.value;
}

/**
 * Sends an insert with `Inserted` and `WriteProtected`, and again without them when the BMC refuses the request
 * (several implement InsertMedia with `Image` only and reject parameters they do not know).
 */
async function withOptionalFlags(full: Json, send: (body: Json) => Promise<unknown>): Promise<void> {
  try {
    await send(full);
  } catch (error) {
    if (!isRedfishError(error, 'REDFISH_BAD_REQUEST')) throw error;
    const { Inserted: _inserted, WriteProtected: _writeProtected, ...bare } = full;
    await send(bare);
  }
}

async function waitFor(ctx: ClientContext, uri: string, what: string, done: (media: Json) => boolean): Promise<void> {
  await pollUntil(async () => (await ctx.http.get(uri)).body, done, {
    intervalMs: ctx.timing.pollIntervalMs,
    timeoutMs: ctx.timing.mediaTimeoutMs,
    what,
  });
}

async function eject(ctx: ClientContext, media: RedfishResource): Promise<void> {
  const standard = findAction(media.body, '#VirtualMedia.EjectMedia');
  const oem = findOemAction(media.body, 'EjectVirtualMedia');
  if (standard) await act(ctx, standard.target, {});
  else if (oem) await act(ctx, oem.target, {});
  else await patchResource(ctx, media.uri, { Image: null, Inserted: false }, media.etag);
  await waitFor(ctx, media.uri, 'virtual media to eject', (m) => !isInserted(m));
}

/**
 * Mounts `imageUrl` on the CD slot. Uses the InsertMedia action where the BMC declares it (standard first, then
 * the vendor's), and falls back to PATCHing Image/Inserted on services that predate the actions.
 */
export async function insertMedia(ctx: ClientContext, imageUrl: string): Promise<MediaResult> {
  let scheme: string;
  try {
    scheme = new URL(imageUrl).protocol.replace(/:$/, '').toUpperCase();
  } catch (cause) {
    throw new RedfishError('REDFISH_BAD_REQUEST', 'Virtual media image must be an absolute URL', { cause });
  }
  const media = await cdMediaSwitchedOn(ctx);
  if (isInserted(media.body) && media.body.Image === imageUrl) return { changed: false, mediaUri: media.uri };
  if (isInserted(media.body)) await eject(ctx, media);

  const standard = findAction(media.body, '#VirtualMedia.InsertMedia');
  const oem = findOemAction(media.body, 'InsertVirtualMedia');
  if (standard) {
    const body: Json = { Image: imageUrl, Inserted: true, WriteProtected: true };
    const protocols = await allowableValues(ctx.http, standard, 'TransferProtocolType');
    if (protocols?.includes(scheme)) body.TransferProtocolType = scheme;
    await withOptionalFlags(body, (b) => act(ctx, standard.target, b));
  } else if (oem) {
    await act(ctx, oem.target, { Image: imageUrl });
  } else {
    await withOptionalFlags({ Image: imageUrl, Inserted: true }, (b) => patchResource(ctx, media.uri, b));
  }
  await waitFor(ctx, media.uri, `virtual media to show ${imageUrl}`, (m) => isInserted(m) && str(m.Image) === imageUrl);
  return { changed: true, mediaUri: media.uri };
}

/** Takes the image out of the CD slot. With remote media switched off there is no slot, and nothing to take out. */
export async function ejectMedia(ctx: ClientContext): Promise<EjectResult> {
  const media = await findCdMedia(ctx);
  if (!media) {
    if (await remoteMediaOff(ctx)) return { changed: false, mediaUri: null };
    throw noCdMedia();
  }
  if (!isInserted(media.body)) return { changed: false, mediaUri: media.uri };
  await eject(ctx, media);
  return { changed: true, mediaUri: media.uri };
}
