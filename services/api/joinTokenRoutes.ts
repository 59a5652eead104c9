import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { JoinExpectation, JoinRole, MAX_JOIN_TOKEN_TTL_SECONDS } from '../../schemas/trust/joinTokens.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { brokerDirOf } from '../platform/config.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { mintJoinToken } from '../trust/joinToken/mint.ts';
import type { ApiContext } from './apiContext.ts';

const MintBody = z
  .object({
    role: JoinRole,
    siteId: ResourceId,
    nodeId: ResourceId.optional(),
    ttlSeconds: z.number().int().min(60).max(MAX_JOIN_TOKEN_TTL_SECONDS).optional(),
    expect: JoinExpectation.optional(),
  })
  .strict();
const Minted = z.object({ tokenId: z.string(), token: z.string(), expiresAt: z.string() });

/**
 * `GET /v1/join-creds` (no token): the public join credential of broker mode, which may only ask to join. Machines an
 * installer seeded (`bcd node --join-creds <url>`) fetch it here; NOT_FOUND without broker auth.
 *
 * `POST /v1/join-tokens` (admin): mints a single-use join token for a site agent (`bcd site --join-token`) or a node
 * agent. The secret is made here and answered this once; the log holds only its hash.
 */
export const joinTokenRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const bus = ctx.bus;
  api.get('/v1/join-creds', {
    schema: { tags: ['trust'], summary: 'The public join credential (broker mode)', response: { 200: z.string(), '4xx': Problem, '5xx': Problem } },
    handler: async (_req, reply) => {
      const file = join(brokerDirOf(ctx.config), 'join.creds');
      if (ctx.config.natsAuth !== 'operator' || !existsSync(file)) throw new PlatformError('NOT_FOUND', 'no join credential: broker auth is off');
      return reply.type('text/plain').send(readFileSync(file, 'utf8'));
    },
  });
  api.post('/v1/join-tokens', {
    schema: {
      tags: ['trust'],
      summary: 'Mint a single-use join token (shown once)',
      body: MintBody,
      response: { 201: Minted, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const actor = req.principal?.actor ?? 'http:anonymous';
      const minted = await mintJoinToken(async (name, payload, commandId) => bus.execute({ name, payload, commandId, actor }), req.body);
      return reply.code(201).send(minted);
    },
  });
};
