import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Problem } from '../../schemas/api.ts';
import { SessionView } from '../../schemas/auth/views.ts';

/** `GET /v1/session`: who the bearer token is, so a client can offer exactly what the role may do. */
export const sessionRoutes: FastifyPluginAsync = async (app) => {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/session', {
    schema: { tags: ['tokens'], summary: 'The calling token: its id, role and tenant', response: { 200: SessionView, '4xx': Problem } },
    handler: async (req) => {
      const principal = req.principal!;
      return { tokenId: principal.tokenId, role: principal.role, tenantId: principal.tenantId };
    },
  });
};
