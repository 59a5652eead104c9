import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getToken, listTokens } from '../../projections/tokens/queries.ts';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { CreateTokenBody } from '../../schemas/auth/commands.ts';
import { CreatedTokenView, TokenIdParams, TokenView } from '../../schemas/auth/views.ts';
import { mintToken } from '../auth/bearer.ts';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

/**
 * `/v1/tokens` (admin only): the token's secret is made here, at the edge, returned in the `POST` answer and nowhere
 * else; `auth.createToken` carries only its hash. Request bodies are not logged and nothing here logs a token.
 */
export const tokenRoutes: FastifyPluginAsync<{ ctx: ApiContext; bus: CommandBus }> = async (app, { ctx, bus }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'tokens');
  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;

  api.post('/v1/tokens', {
    schema: {
      tags: ['tokens'],
      summary: 'Create an API token; the answer holds the bearer token, shown this once',
      body: CreateTokenBody,
      response: { 201: CreatedTokenView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const tokenId = req.body.tokenId ?? `t-${randomBytes(8).toString('hex')}`;
      const { token, secretHash } = mintToken(tokenId);
      const { tokenId: _ignored, ...fields } = req.body;
      const result = await bus.execute({
        name: 'auth.createToken',
        payload: { ...fields, tokenId, secretHash },
        actor: req.principal?.actor ?? 'http:anonymous',
      });
      return reply.code(201).send({ tokenId, role: req.body.role, tenantId: req.body.tenantId ?? null, token, seq: result.seq });
    },
  });

  api.delete('/v1/tokens/:tokenId', {
    schema: {
      tags: ['tokens'],
      summary: 'Revoke a token: refused from the next request on',
      params: TokenIdParams,
      response: { 200: z.object({ tokenId: z.string(), revoked: z.boolean(), seq: z.number().int() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const result = await bus.execute({ name: 'auth.revokeToken', payload: { tokenId: req.params.tokenId }, actor: req.principal?.actor ?? 'http:anonymous' });
      return { tokenId: req.params.tokenId, revoked: true, seq: result.seq };
    },
  });

  api.get('/v1/tokens', {
    schema: {
      tags: ['tokens'],
      summary: 'Tokens (never their secrets), ordered by id',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(TokenView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listTokens(reader.db()) };
    },
  });

  api.get('/v1/tokens/:tokenId', {
    schema: {
      tags: ['tokens'],
      summary: 'One token',
      params: TokenIdParams,
      querystring: MinSeqQuery,
      response: { 200: TokenView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const token = getToken(reader.db(), req.params.tokenId);
      if (!token) throw new PlatformError('NOT_FOUND', `token ${req.params.tokenId} not found`);
      return token;
    },
  });
};
