import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getSecret, listSecrets } from '../../projections/secrets/queries.ts';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { SecretKind, sealingAad, secretRefOf } from '../../schemas/secrets/sealed.ts';
import type { SecretEvent } from '../../schemas/secrets/events.ts';
import { PutSecretBody, SecretIdParams, SecretStoredView, SecretView } from '../../schemas/secrets/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { loadMasterKey } from '../secrets/masterKey.ts';
import { seal } from '../secrets/sealing.ts';
import { secretRequestDigest } from '../secrets/secretRequestDigest.ts';
import { secretAggregate } from '../secrets/secret/secret.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      "Retrying with the same key (scoped to the caller's token) answers the original result; the same key with another secret, verb or body answers 409 IDEMPOTENCY_KEY_REUSED",
    ),
});

/**
 * `/v1/secrets`: the one place plaintext enters. `PUT` seals the value with the master key here, at the edge, and only
 * then sends `secrets.put` (an `edge` command: operators cannot send it as `POST /v1/commands`). Reads return
 * metadata and the `secret:<id>` reference, never the value or its sealed form. Request bodies are not logged
 * (request logging is off in `buildApi`), and no error built here carries any part of a value.
 */
export const secretRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = readerOf(ctx, 'secrets');
  const masterKey = loadMasterKey(ctx.config);
  const bus = ctx.bus;
  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;

  api.put('/v1/secrets/:secretId', {
    schema: {
      tags: ['secrets'],
      summary: 'Store a new version of a secret (sealed here; the plaintext is never stored, logged or returned)',
      params: SecretIdParams,
      headers: IdempotencyHeaders,
      body: PutSecretBody,
      response: { 200: SecretStoredView, 201: SecretStoredView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const { secretId } = req.params;
      const plaintext = JSON.stringify(req.body.value);
      const key = req.headers['idempotency-key'];
      const requestDigest = key === undefined ? undefined : secretRequestDigest(masterKey, { secretId, ...req.body });
      // The version is part of the sealed value's authenticated data: a put that raced another is sealed again.
      for (let attempt = 0; ; attempt++) {
        const { state } = await bus.repository.load(secretAggregate, secretId);
        const version = state.version + 1;
        try {
          const result = await bus.execute({
            name: 'secrets.put',
            payload: {
              secretId,
              kind: req.body.kind,
              version,
              sealed: seal(plaintext, masterKey, sealingAad(secretId, version)),
              ...(req.body.description !== undefined ? { description: req.body.description } : {}),
            },
            ...(key !== undefined ? { idempotencyKey: key, requestDigest } : {}),
            actor: req.principal?.actor ?? 'http:anonymous',
          });
          const stored = result.events.find((e) => e.type === 'SecretStored')?.data as Extract<SecretEvent, { type: 'SecretStored' }>['data'] | undefined;
          if (!stored) throw new PlatformError('INTERNAL', `secrets.put of ${secretId} stored nothing`);
          return reply.code(result.duplicate ? 200 : 201).send({
            secretId,
            ref: secretRefOf(secretId),
            kind: stored.kind,
            version: stored.version,
            keyId: stored.keyId,
            seq: result.seq,
            duplicate: result.duplicate,
          });
        } catch (err) {
          if (!(err instanceof PlatformError && err.code === 'CONCURRENCY_CONFLICT') || attempt >= ctx.config.commandRetries) throw err;
        }
      }
    },
  });

  api.delete('/v1/secrets/:secretId', {
    schema: {
      tags: ['secrets'],
      summary: 'Delete a secret: grants for it stop at once',
      params: SecretIdParams,
      headers: IdempotencyHeaders,
      response: { 200: z.object({ secretId: z.string(), deleted: z.boolean(), seq: z.number().int() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      const result = await bus.execute({
        name: 'secrets.delete',
        payload: { secretId: req.params.secretId },
        idempotencyKey: req.headers['idempotency-key'],
        actor: req.principal?.actor ?? 'http:anonymous',
      });
      return { secretId: req.params.secretId, deleted: result.events.some((e) => e.type === 'SecretDeleted'), seq: result.seq };
    },
  });

  api.get('/v1/secrets', {
    schema: {
      tags: ['secrets'],
      summary: 'Secrets (metadata only), ordered by id',
      querystring: MinSeqQuery.extend({ kind: SecretKind.optional() }),
      response: { 200: z.object({ items: z.array(SecretView) }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listSecrets(reader.db(), req.query.kind ? { kind: req.query.kind } : {}) };
    },
  });

  api.get('/v1/secrets/:secretId', {
    schema: {
      tags: ['secrets'],
      summary: "One secret's metadata",
      params: SecretIdParams,
      querystring: MinSeqQuery,
      response: { 200: SecretView, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const secret = getSecret(reader.db(), req.params.secretId);
      if (!secret) throw new PlatformError('NOT_FOUND', `secret ${req.params.secretId} not found`);
      return secret;
    },
  });
};
