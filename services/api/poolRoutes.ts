import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { claimableNodeIds, poolOffers } from '../../projections/nodes/poolOffers.ts';
import { CommandResult, MinSeqQuery, Problem } from '../../schemas/api.ts';
import { AllocateNode, PoolOffer } from '../../schemas/metal/poolViews.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

/** Free nodes a racing caller may take between the read and the deploy: this many are tried before giving up. */
const candidatesTried = 5;

/**
 * The free pool, for a tenant that owns nothing yet (its node list is empty: free nodes are nobody's, so not its):
 * what it may take, grouped, and taking one. Taking is `metal.deploy` on a node the API picks, so the decider's rules
 * (a free, ready node out of maintenance; the tenant from the token) decide, as they do for a node named by id.
 */
export const poolRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'nodes');
  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;

  api.get('/v1/pool/offers', {
    schema: {
      tags: ['nodes'],
      summary: 'What may be taken from the free pool: counts by site, pool and hardware profile',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(PoolOffer) }) },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: reader.query((db) => poolOffers(db)) };
    },
  });

  api.post('/v1/pool/allocate', {
    schema: {
      tags: ['nodes'],
      summary: 'Take a free node of an offer and deploy it (metal.deploy on the node the API picks)',
      querystring: MinSeqQuery,
      body: AllocateNode,
      response: { 201: CommandResult.extend({ nodeId: z.string() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const { deploy, ...offer } = req.body;
      const tenantId = req.principal?.tenantId ?? undefined;
      const candidates = reader.query((db) => claimableNodeIds(db, offer, candidatesTried));
      for (const nodeId of candidates) {
        try {
          const result = await ctx.bus.execute({
            name: 'metal.deploy',
            payload: { ...deploy, nodeId, ...(tenantId ? { tenantId } : {}) },
            actor: req.principal?.actor ?? 'http:anonymous',
          });
          // No events: the node already runs this very deploy (this caller's, a moment ago): not a node taken now.
          if (result.events.length > 0 && !result.duplicate) return reply.code(201).send({ ...result, nodeId });
        } catch (err) {
          // Taken (or changed) since the read model said free: the next one.
          if (err instanceof PlatformError && (err.code === 'NOT_FOUND' || err.code === 'ILLEGAL_TRANSITION')) continue;
          throw err;
        }
      }
      throw new PlatformError(
        'PRECONDITION_FAILED',
        `no free node of ${offer.hardwareProfile} at ${offer.siteId}${offer.poolId ? ` in pool ${offer.poolId}` : ''} is left`,
      );
    },
  });
};
