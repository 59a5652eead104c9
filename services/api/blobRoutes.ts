import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { BlobStore } from '../blobs/blobStore.ts';
import { publicUrlOf } from '../platform/config.ts';
import { openOnFirstUse } from '../platform/openOnFirstUse.ts';
import type { ApiContext } from './apiContext.ts';

/**
 * `GET /v1/blobs/<nodeId>/<capability>/<sha256>`: a step artefact for the machine that boots it. No bearer token:
 * a BMC mounting an ISO has none; the random capability in the URL is the authorisation, and every miss answers the
 * same 404.
 */
export const blobRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const blobs = openOnFirstUse(() => BlobStore.open(ctx.nc, publicUrlOf(ctx.config)));
  api.get('/v1/blobs/:nodeId/:capability/:sha256', {
    schema: {
      tags: ['blobs'],
      summary: 'A step artefact (ISO, seed) by its capability URL',
      params: z.object({ nodeId: ResourceId, capability: z.string(), sha256: z.string() }),
      response: { 200: z.any().describe('application/octet-stream'), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const bytes = await (await blobs()).read(req.params.nodeId, req.params.capability, req.params.sha256);
      return reply.header('content-type', 'application/octet-stream').header('cache-control', 'private, max-age=3600').send(Buffer.from(bytes));
    },
  });
};
