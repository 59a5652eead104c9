import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { SEED_MAGIC, SEED_MAX_BYTES, seedPartitionOffset } from '../../schemas/agent/nodeSeed.ts';
import type { ExecutionContext } from '../agent/commandRunner.ts';
import { AgentError } from '../agent/errors.ts';
import { diskSizeBytes, isBlockDevice } from './blockDevices.ts';
import { openImage } from './imageWrite.ts';
import { dropDeviceCache } from './utilLinux.ts';

/** Where the seed went; the token inside is never part of a result. */
export type WrittenSeed = { written: true; disk: string; offset: number; sha256: string; verified: true } | { written: false; disk: string; reason: string };

/** The seed's bytes, fetched (the site's cache first) and checked: the digest the command named, the size and magic. */
async function fetchSeed(seed: { url: string; sha256: string }, ctx: ExecutionContext, siteCacheUrl: string | undefined): Promise<Buffer> {
  const { response, source } = await openImage(seed.url, seed.sha256, ctx, siteCacheUrl);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > SEED_MAX_BYTES) throw new AgentError('IMAGE_TOO_LARGE', `the node seed from ${source} is larger than ${SEED_MAX_BYTES} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  const bytes = Buffer.concat(chunks);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== seed.sha256) throw new AgentError('IMAGE_CHECKSUM_MISMATCH', `the node seed from ${source} hashes to ${digest}, expected ${seed.sha256}`);
  if (bytes.length !== SEED_MAX_BYTES || bytes.subarray(0, SEED_MAGIC.length).toString('latin1') !== SEED_MAGIC)
    throw new AgentError('INVALID_COMMAND', `${source} is not a node seed`);
  return bytes;
}

/**
 * Writes the node seed into the `bc-seed` partition (MBR type 0xda) of the image just written to `disk`, fsyncs it
 * and reads it back from the device. An image without that partition (any image not built for `bcd node`) gets no
 * seed: the result says so and nothing is written. The host's init zeroes the seed once its `bcd node` joined.
 */
export async function writeNodeSeed(
  disk: string,
  seed: { url: string; sha256: string },
  ctx: ExecutionContext,
  siteCacheUrl: string | undefined,
): Promise<WrittenSeed> {
  const handle = await open(disk, 'r+');
  try {
    const mbr = Buffer.alloc(512);
    await handle.read(mbr, 0, 512, 0);
    const offset = seedPartitionOffset(mbr);
    if (offset === undefined) return { written: false, disk, reason: 'the image on the disk has no bc-seed partition' };
    if (offset < 512 || offset + SEED_MAX_BYTES > (await diskSizeBytes(handle, disk)))
      throw new AgentError('INVALID_COMMAND', `the bc-seed partition of ${disk} lies outside the disk`);
    const bytes = await fetchSeed(seed, ctx, siteCacheUrl);
    await handle.write(bytes, 0, bytes.length, offset);
    await handle.sync();
    if (await isBlockDevice(handle)) await dropDeviceCache(disk, ctx);
    const back = Buffer.alloc(bytes.length);
    await handle.read(back, 0, back.length, offset);
    if (!back.equals(bytes)) throw new AgentError('DISK_VERIFY_FAILED', `the node seed on ${disk} does not read back as written`);
    return { written: true, disk, offset, sha256: seed.sha256, verified: true };
  } finally {
    await handle.close();
  }
}
