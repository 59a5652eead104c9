import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Problem } from '../../schemas/api.ts';
import { ServicesView } from '../../schemas/lease.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { LeaseReader } from '../platform/lease/leaseReader.ts';
import type { ResponderRoster } from '../commands/responderRoster.ts';

/**
 * `GET /v1/services`: which instance leads each single-active service (from the `bc_leases` bucket), and which
 * `commands` replicas share the command partitions (as heard on `bc.ctl.commands.responders` within the last beats).
 */
export const serviceRoutes: FastifyPluginAsync<{ leases: LeaseReader; commandResponders: ResponderRoster }> = async (app, { leases, commandResponders }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get('/v1/services', {
    schema: {
      tags: ['services'],
      summary:
        'Leader leases (who leads the workflow orchestrator, the BMC monitor, the VPS reconciler and the fleet sensors, under which term) and the commands replicas with their command partitions',
      response: { 200: ServicesView, '4xx': Problem, '5xx': Problem },
    },
    handler: async () => {
      try {
        return { leaders: await leases.leaders(), commandResponders: commandResponders.view() };
      } catch (err) {
        throw new PlatformError('UNAVAILABLE', 'the lease bucket could not be read', { cause: err });
      }
    },
  });
};
