import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { DriverView, PluginView, ProfileValidation, ProfileView, ValidateProfileRequest } from '../../schemas/plugins/views.ts';
import { PluginCatalog } from '../plugins/pluginCatalog.ts';
import { allProfiles, findProfile, validateProfile } from '../plugins/profileCatalog.ts';
import type { ApiContext } from './apiContext.ts';

/**
 * `plugins.list`, `drivers.list`, `profiles.list` and `profiles.validate`: what plugins registered, read from the
 * registry aggregate, with liveness from the replicas that answer a ping.
 */
export const pluginRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const catalog = new PluginCatalog(ctx.nc, ctx.store);

  api.get('/v1/plugins', {
    schema: {
      tags: ['plugins'],
      summary: 'Registered plugins, their latest registration and live replicas',
      response: { 200: z.object({ items: z.array(PluginView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async () => ({ items: await catalog.list() }),
  });

  api.get('/v1/drivers', {
    schema: {
      tags: ['plugins'],
      summary: 'Drivers plugins registered',
      response: { 200: z.object({ items: z.array(DriverView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async () => ({ items: [...(await catalog.registry()).plugins.values()].flatMap((p) => p.drivers.map((d) => ({ ...d, pluginId: p.pluginId }))) }),
  });

  api.get('/v1/profiles', {
    schema: {
      tags: ['plugins'],
      summary: 'Profiles that can be chosen: built in, then registered',
      response: { 200: z.object({ items: z.array(ProfileView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async () => ({ items: allProfiles(await catalog.registry()).map(({ profile, pluginId }) => ({ ...profile, pluginId })) }),
  });

  api.post('/v1/profiles/validate', {
    schema: {
      tags: ['plugins'],
      summary: 'Check that every step of a profile resolves to a registered step that runs where the profile says',
      body: ValidateProfileRequest,
      response: { 200: ProfileValidation, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const registry = await catalog.registry();
      if ('profileId' in req.body) {
        const profile = findProfile(registry, req.body.profileId);
        const issues = profile
          ? validateProfile(registry, profile)
          : [{ stepIndex: null, stepId: null, code: 'PROFILE_UNKNOWN' as const, message: `no profile "${req.body.profileId}" is built in or registered` }];
        return { profileId: req.body.profileId, ok: issues.length === 0, issues };
      }
      const issues = validateProfile(registry, req.body.profile);
      const id = (req.body.profile as { id?: unknown } | null)?.id;
      return { profileId: typeof id === 'string' ? id : null, ok: issues.length === 0, issues };
    },
  });
};
