import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ApiContext } from './apiContext.ts';

const ProjectorStatus = z.object({ name: z.string(), checkpoint: z.number(), streamLastSeq: z.number(), lag: z.number(), rebuilding: z.boolean() });

/** Operator access to projector processes: status and rebuild, relayed over their `bc.ctl.projector.*` subjects. */
export const projectionAdminRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const known = (name: string) => {
    if (!ctx.readers.has(name)) throw new PlatformError('NOT_FOUND', `no read model ${name}; known: ${[...ctx.readers.keys()].join(', ')}`);
  };
  const ask = async (name: string, verb: 'status' | 'rebuild', timeout: number) => {
    try {
      return (await ctx.nc.request(Subjects.projectorControl(name, verb), '', { timeout })).json<unknown>();
    } catch (err) {
      throw new PlatformError('UNAVAILABLE', `projector ${name} did not answer`, { cause: err });
    }
  };

  api.get('/v1/admin/projections/:name', {
    schema: {
      tags: ['admin'],
      summary: "A projector's checkpoint and lag",
      params: z.object({ name: z.string() }),
      response: { 200: ProjectorStatus, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      known(req.params.name);
      return ProjectorStatus.parse(await ask(req.params.name, 'status', 5_000));
    },
  });

  api.post('/v1/admin/projections/:name/rebuild', {
    schema: {
      tags: ['admin'],
      summary: 'Replay the whole log into a new read model file and swap it in; the old one serves meanwhile',
      params: z.object({ name: z.string() }),
      response: { 200: ProjectorStatus, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      known(req.params.name);
      const answer = (await ask(req.params.name, 'rebuild', 600_000)) as { ok: boolean; status?: unknown; error?: string };
      if (!answer.ok) throw new PlatformError('UNAVAILABLE', `rebuild of ${req.params.name} failed: ${answer.error}`);
      return ProjectorStatus.parse(answer.status);
    },
  });
};
