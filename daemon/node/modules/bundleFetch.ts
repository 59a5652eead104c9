import { createHash } from 'node:crypto';
import { MAX_BUNDLE_BYTES } from '../../../schemas/fleet/modules.ts';
import type { ExecutionContext } from '../../agent/commandRunner.ts';
import { AgentError } from '../../agent/errors.ts';
import { openImage } from '../../ramdisk/imageWrite.ts';

/**
 * A module bundle's bytes, fetched the way a ramdisk fetches an image (the site agent's verified cache first, which
 * learns the URL from the command itself, then `url`) and checked against the sha256 the command names before the
 * verifier reads a byte.
 */
export async function fetchBundle(url: string, sha256: string, ctx: ExecutionContext, siteCacheUrl: string | undefined): Promise<Uint8Array> {
  const { response, source } = await openImage(url, sha256, ctx, siteCacheUrl);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_BUNDLE_BYTES) throw new AgentError('IMAGE_TOO_LARGE', `the bundle from ${source} is larger than ${MAX_BUNDLE_BYTES} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  const bytes = Buffer.concat(chunks);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== sha256) throw new AgentError('IMAGE_CHECKSUM_MISMATCH', `the bundle from ${source} hashes to ${digest}, expected ${sha256}`);
  return bytes;
}
