import { encodeNodeSeed, NodeSeedError } from '../../schemas/agent/nodeSeed.ts';
import { TerminalError, type StepContext } from '../../plugins/sdk/index.ts';

/** Long enough for the image's first boot after the deploy's last power cycle, not for a later redeploy. */
const NODE_SEED_TTL_SECONDS = 3_600;

/**
 * The node seed of a deploy (`schemas/agent/nodeSeed.ts`): a single-use `node` join token for this node, bound to
 * the SMBIOS UUID inspection read, with the site, node and NATS endpoints the host's `bcd node` joins with. Stored
 * as a step artefact (`bc_blobs`): only its capability URL and digest go into the `userdata.write` command, so the
 * token is in no event, command or log; the ramdisk fetches it (through the site's verified cache) and writes it into
 * the image's `bc-seed` partition.
 */
export async function storeNodeSeed(ctx: StepContext<unknown>): Promise<{ url: string; sha256: string }> {
  const { nodeId, siteId, productUuid } = ctx.node;
  const joinToken = await ctx.pki.mintJoinToken({ role: 'node', ttlSeconds: NODE_SEED_TTL_SECONDS, ...(productUuid ? { expect: { productUuid } } : {}) });
  let bytes: Buffer;
  try {
    bytes = encodeNodeSeed({
      siteId,
      nodeId,
      natsUrl: ctx.agentEndpoints.natsUrl,
      joinToken,
      ...(ctx.agentEndpoints.joinCredsUrl ? { joinCredsUrl: ctx.agentEndpoints.joinCredsUrl } : {}),
    });
  } catch (err) {
    // The message names the field only, never the value.
    if (err instanceof NodeSeedError) throw new TerminalError('VALIDATION_FAILED', `the node seed cannot be written: ${err.message}`);
    throw err;
  }
  const stored = await ctx.blobs.put(bytes, { name: `${nodeId}-node-seed` });
  ctx.log.info({ sha256: stored.sha256 }, 'node seed stored');
  return { url: stored.url, sha256: stored.sha256 };
}
