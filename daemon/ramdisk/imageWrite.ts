import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { diskSizeBytes, isBlockDevice } from './blockDevices.ts';
import { dropDeviceCache } from './utilLinux.ts';
import { BatchedWriter } from './batchedWriter.ts';
import { progressLine } from './progressLine.ts';
import { readAhead } from './readAhead.ts';

export interface WrittenImage {
  disk: string;
  /** Where the bytes came from: the site agent's cache when it had the image, else the command's URL. */
  source: string;
  bytesWritten: number;
  sha256: string;
  /** The written region was read back from the disk and hashes to `sha256`. */
  verified: boolean;
}

const CHUNK = 4 << 20;
/** How often a long write says it is alive: each heartbeat is a message on the machine's own (emulated) network. */
const HEARTBEAT_MS = 1_000;

/** `beat`, at most once per `intervalMs`. */
function throttled(beat: () => void, intervalMs: number): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    beat();
  };
}

async function zeroPrefix(handle: FileHandle, length: number): Promise<void> {
  const zeros = Buffer.alloc(CHUNK);
  for (let offset = 0; offset < length; offset += CHUNK) await handle.write(zeros, 0, Math.min(CHUNK, length - offset), offset);
  await handle.sync();
}

async function hashPrefix(handle: FileHandle, length: number, ctx: ExecutionContext): Promise<string> {
  const hash = createHash('sha256');
  await readAhead(handle, length, CHUNK, (bytes) => {
    hash.update(bytes);
    ctx.heartbeat();
  });
  return hash.digest('hex');
}

const CACHE_ATTEMPTS = 5;
/** A transfer cut mid-body is resumed with a Range request this many times, waiting 2, 4, … s (a site agent restarting). */
const RESUME_ATTEMPTS = 6;

/** The rest of `source` from byte `from` on, or undefined when the server cannot resume there (then the write fails). */
async function resumeAt(source: string, from: number, ctx: ExecutionContext): Promise<Response | undefined> {
  const response = await fetch(source, { headers: { range: `bytes=${from}-` }, signal: ctx.signal }).catch(() => undefined);
  // Only a 206 that starts exactly where the disk stops continues the same bytes; anything else would splice two files.
  if (response?.status === 206 && response.body && response.headers.get('content-range')?.startsWith(`bytes ${from}-`)) return response;
  await response?.body?.cancel();
  return undefined;
}

/**
 * The site agent's cache first (`<siteCacheUrl>/images/<sha256>`): it learns the source from the same command,
 * possibly a moment after this ramdisk, so a 404 is retried briefly before falling back to `imageUrl` itself.
 */
export async function openImage(
  imageUrl: string,
  sha256: string,
  ctx: ExecutionContext,
  siteCacheUrl: string | undefined,
): Promise<{ response: Response; source: string }> {
  if (siteCacheUrl && !imageUrl.startsWith(`${siteCacheUrl}/`)) {
    const cached = `${siteCacheUrl}/images/${sha256}`;
    for (let attempt = 1; attempt <= CACHE_ATTEMPTS; attempt++) {
      const response = await fetch(cached, { signal: ctx.signal }).catch(() => undefined);
      if (response?.ok && response.body) return { response, source: cached };
      await response?.body?.cancel();
      if (response?.status !== 404) break;
      await sleep(100 * attempt, undefined, { signal: ctx.signal });
    }
  }
  try {
    const response = await fetch(imageUrl, { signal: ctx.signal });
    if (!response.ok || !response.body) throw new AgentError('IMAGE_UNAVAILABLE', `fetching ${imageUrl} answered ${response.status}`);
    return { response, source: imageUrl };
  } catch (cause) {
    if (cause instanceof AgentError) throw cause;
    throw new AgentError('IMAGE_UNAVAILABLE', `fetching ${imageUrl} failed`, { cause });
  }
}

/**
 * Streams `imageUrl` onto the start of `disk` (a block device, or a file in simulation), hashing as it writes; after
 * an fsync the written region is read back from the device and hashed again. A digest mismatch (in transit or on disk) fails with IMAGE_CHECKSUM_MISMATCH and the
 * written prefix is zeroed, so a half-good image is never left behind to boot from.
 */
export async function writeImage(disk: string, imageUrl: string, sha256: string, ctx: ExecutionContext, siteCacheUrl?: string): Promise<WrittenImage> {
  const opened = await openImage(imageUrl, sha256, ctx, siteCacheUrl);
  const source = opened.source;
  let response = opened.response;
  const handle = await open(disk, 'r+');
  let written = 0;
  try {
    const diskSize = await diskSizeBytes(handle, disk);
    const hash = createHash('sha256');
    const heartbeat = throttled(() => ctx.heartbeat(), HEARTBEAT_MS);
    // Where from, without the URL: a blob URL is a capability, and an image URL may carry a token.
    const expected = Number(response.headers.get('content-length') ?? 0);
    ctx.output?.('stdout', `writing image ${sha256.slice(0, 12)}… to ${basename(disk)} from ${source === imageUrl ? 'its source' : 'the site cache'}`);
    const progress = progressLine(ctx, `write ${basename(disk)}`, expected > 0 ? expected : diskSize);
    // A cut connection (the site agent restarted, a slow reader dropped) resumes where the disk stops: the hash runs
    // over exactly the bytes written, so a bad splice still fails the digest check below.
    for (let resumes = 0; ;) {
      // `written` counts the bytes handed to the writer; each pass drains it, so a resume starts where the disk stops.
      const writer = new BatchedWriter(handle, written);
      try {
        try {
          for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
            if (written + chunk.length > diskSize) throw new AgentError('IMAGE_TOO_LARGE', `image is larger than ${disk} (${diskSize} bytes)`);
            await writer.add(chunk);
            hash.update(chunk);
            written += chunk.length;
            heartbeat();
            progress(written);
          }
        } finally {
          await writer.drain();
        }
        break;
      } catch (err) {
        if (err instanceof AgentError || ctx.signal.aborted) throw err;
        let next: Response | undefined;
        while (!next && resumes < RESUME_ATTEMPTS) {
          resumes += 1;
          await sleep(2_000 * resumes, undefined, { signal: ctx.signal });
          ctx.heartbeat();
          next = await resumeAt(source, written, ctx);
        }
        if (!next) throw err;
        ctx.output?.('stderr', `transfer cut at ${written} bytes; resumed (attempt ${resumes})`);
        response = next;
      }
    }
    await handle.sync();
    const streamed = hash.digest('hex');
    if (streamed !== sha256) throw new AgentError('IMAGE_CHECKSUM_MISMATCH', `image from ${source} hashes to ${streamed}, expected ${sha256}`);
    // The read-back must come from the device, not from the pages this write left in its cache.
    if (await isBlockDevice(handle)) await dropDeviceCache(disk, ctx);
    ctx.output?.('stdout', `${written} bytes written, digest matches; reading them back from ${basename(disk)}`);
    const onDisk = await hashPrefix(handle, written, ctx);
    if (onDisk !== sha256) throw new AgentError('IMAGE_CHECKSUM_MISMATCH', `${disk} reads back as ${onDisk}, expected ${sha256}`);
    ctx.output?.('stdout', `${basename(disk)} reads back as the image`);
    return { disk, source, bytesWritten: written, sha256, verified: true };
  } catch (err) {
    if (!ctx.signal.aborted) await zeroPrefix(handle, written).catch(() => undefined);
    if (err instanceof AgentError) throw err;
    throw new AgentError('IMAGE_UNAVAILABLE', `writing ${source} to ${disk} failed`, { cause: err });
  } finally {
    await handle.close();
  }
}
