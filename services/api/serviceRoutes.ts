import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Problem } from '../../schemas/api.ts';
import { ServicesView } from '../../schemas/lease.ts';
import { PlatformError } from '../platform/errors.ts';
import type { LeaseReader } from '../platform/lease/leaseReader.ts';

/** `GET /v1/services`: which instance leads each single-active service (from the `bc_leases` bucket). */
export const serviceRoutes: FastifyPluginAsync<{ leases: LeaseReader }> = async (app, { leases }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get('/v1/services', {
    schema: {
      tags: ['services'],
      summary: 'Leader leases: who leads the workflow orchestrator, the BMC monitor and the VPS reconciler, under which term',
      response: { 200: ServicesView, '4xx': Problem, '5xx': Problem },
    },
    handler: async () => {
      try {
        return { leaders: await leases.leaders() };
      } catch (err) {
        throw new PlatformError('UNAVAILABLE', 'the lease bucket could not be read', { cause: err });
      }
    },
  });
};
