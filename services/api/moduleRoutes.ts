import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Problem } from '../../schemas/api.ts';
import { ModuleName, ModuleVersion } from '../../schemas/fleet/moduleManifest.ts';
import { MAX_BUNDLE_BYTES, PublishModuleVersion } from '../../schemas/fleet/modules.ts';
import { BlobStore } from '../blobs/blobStore.ts';
import { payloadDigest } from '../platform/commands/commandBus.ts';
import { publicUrlOf } from '../platform/config.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { openOnFirstUse } from '../platform/openOnFirstUse.ts';
import type { ApiContext } from './apiContext.ts';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * Module bundles (docs/modules.md). `PUT /v1/modules/bundles` stores a bundle's bytes in the blob store by sha256 (not
 * yet trusted: anything may be uploaded, nothing is published); `POST /v1/modules/:module/versions` reads the bundle
 * named by its sha256 and sends `fleet.publishModuleVersion` with it, where the decider verifies it against the
 * publisher keys trusted now.
 */
export const moduleRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const blobs = openOnFirstUse(() => BlobStore.open(ctx.nc, publicUrlOf(ctx.config)));
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: MAX_BUNDLE_BYTES }, (_req, body, done) => done(null, body));

  api.put('/v1/modules/bundles', {
    schema: {
      tags: ['modules'],
      summary: 'Upload a module bundle (application/octet-stream); answers its sha256 to publish it by',
      response: { 201: z.object({ sha256: Sha256, size: z.number().int() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      if (!Buffer.isBuffer(req.body)) throw new PlatformError('UNSUPPORTED_MEDIA_TYPE', 'a bundle is sent as application/octet-stream');
      return reply.code(201).send(await (await blobs()).putContent(req.body, 'module bundle'));
    },
  });

  api.post('/v1/modules/:module/versions', {
    schema: {
      tags: ['modules'],
      summary: 'Publish an uploaded bundle as a version of the module (fleet.publishModuleVersion)',
      params: z.object({ module: ModuleName }),
      headers: z.object({ 'idempotency-key': z.string().optional() }).passthrough(),
      body: z.object({ version: ModuleVersion, bundleSha256: Sha256 }).strict(),
      response: {
        201: z.object({ module: z.string(), version: z.string(), manifestSha256: z.string(), seq: z.number().int(), duplicate: z.boolean() }),
        '4xx': Problem,
        '5xx': Problem,
      },
    },
    handler: async (req, reply) => {
      const request = PublishModuleVersion.parse({ module: req.params.module, ...req.body });
      const bundle = await (await blobs()).readContent(request.bundleSha256);
      if (!bundle) throw new PlatformError('BUNDLE_NOT_STORED', `no bundle with sha256 ${request.bundleSha256} is stored (PUT /v1/modules/bundles)`);
      const key = req.headers['idempotency-key'];
      const result = await ctx.bus.execute({
        name: 'fleet.publishModuleVersion',
        payload: { ...request, bundle },
        // The request, not the bytes, is what a repeat must match: the digest names the bytes.
        ...(key !== undefined ? { idempotencyKey: key, requestDigest: payloadDigest(request) } : {}),
        actor: req.principal?.actor ?? 'http:anonymous',
      });
      const published = result.events.find((e) => e.type === 'ModuleVersionPublished')?.data as { manifestSha256: string } | undefined;
      if (!published) throw new PlatformError('INTERNAL', `fleet.publishModuleVersion of ${request.module} ${request.version} stored nothing`);
      return reply
        .code(201)
        .send({ module: request.module, version: request.version, manifestSha256: published.manifestSha256, seq: result.seq, duplicate: result.duplicate });
    },
  });
};
