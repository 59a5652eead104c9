import fastifyCompress from '@fastify/compress';
import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { capsOf, loadWorkflowConfig } from '../workflow/config.ts';
import { nodeRoutes } from '../../projections/nodes/routes.ts';
import { startAgentPresence } from '../agents/agentPresence.ts';
import { siteRoutes } from '../../projections/sites/routes.ts';
import { moduleReadRoutes } from '../../projections/modules/routes.ts';
import { fleetReadRoutes } from '../../projections/modules/fleetRoutes.ts';
import { rolloutReadRoutes } from '../../projections/modules/rolloutRoutes.ts';
import { workflowRoutes } from '../../projections/workflows/routes.ts';
import { trendRoutes } from '../../projections/trends/routes.ts';
import { vpsRoutes } from '../../projections/vps/routes.ts';
import { ensureAdminToken } from '../auth/bootstrap.ts';
import { operatorCommands } from './commandCatalog.ts';
import { DeadLetterReader } from '../platform/deadLetters/deadLetterReader.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from '../platform/logger.ts';
import { readerOf, type ApiContext } from './apiContext.ts';
import { installAuthentication } from './authentication.ts';
import { commandRoutes } from './commandRoutes.ts';
import { deadLetterRoutes } from './deadLetterRoutes.ts';
import { eventRoutes } from './eventRoutes.ts';
import { poolRoutes } from './poolRoutes.ts';
import { holdRoutes } from './holdRoutes.ts';
import { healthRoutes } from './healthRoutes.ts';
import { problemOf, toPlatformError } from '../platform/problem.ts';
import { projectionAdminRoutes } from './projectionAdminRoutes.ts';
import { installRateLimit } from './rateLimit.ts';
import { installMinSeqCheck } from './readYourWrites.ts';
import { secretRoutes } from './secretRoutes.ts';
import { installTenancy } from './tenancy.ts';
import { tokenRoutes } from './tokenRoutes.ts';
import { approvalRoutes } from './approvalRoutes.ts';
import { autonomyApiRoutes } from './autonomyApiRoutes.ts';
import { autonomyRoutes } from '../../projections/autonomy/routes.ts';
import { joinTokenRoutes } from './joinTokenRoutes.ts';
import { pluginRoutes } from './pluginRoutes.ts';
import { serviceRoutes } from './serviceRoutes.ts';
import { listenToResponders, ResponderRoster } from '../commands/responderRoster.ts';
import { LeaseReader } from '../platform/lease/leaseReader.ts';
import { blobRoutes } from './blobRoutes.ts';
import { moduleRoutes } from './moduleRoutes.ts';
import { assignmentRoutes } from './assignmentRoutes.ts';
import { rolloutRoutes } from './rolloutRoutes.ts';
import { consoleDistDir } from '../console/consoleBuild.ts';
import { consoleRoutes } from './consoleRoutes.ts';
import { nodeHistoryRoutes } from './nodeHistoryRoutes.ts';
import { nodeLogRoutes } from './nodeLogRoutes.ts';
import { sessionRoutes } from './sessionRoutes.ts';
import { installSecurityHeaders } from './securityHeaders.ts';

/**
 * The HTTP query/command API. Every error leaves as problem+json with a stable code. Every `/v1/*` route but the
 * OpenAPI document needs a bearer token (`authentication.ts`); on a fresh log the API creates the bootstrap admin
 * token (`<dataDir>/admin.token`).
 */
export async function buildApi(ctx: ApiContext, log: Logger) {
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it; the rule's inference differs here
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Commands are JSON only: a text/plain body is refused with 415 rather than parsed as a string.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err, req, reply) => {
    const platformError = toPlatformError(err);
    if (platformError.code === 'INTERNAL') req.log.error({ err }, 'request failed');
    // NATS restarting or a leader moving: clients may retry; say when (RFC 9110 §10.2.3).
    if (platformError.code === 'UNAVAILABLE') void reply.header('retry-after', '1');
    return reply.code(platformError.status).type('application/problem+json').send(problemOf(platformError, req.url));
  });
  app.setNotFoundHandler((req, reply) => {
    const err = new PlatformError('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`);
    return reply.code(404).type('application/problem+json').send(problemOf(err, req.url));
  });

  // First: its hook runs before authentication and the rate limit, so their refusals carry the headers too.
  await installSecurityHeaders(app);
  // The process's bus sends the commands of the edge routes (tokens, approvals) too; its repository serves token look-ups.
  const tokens = installAuthentication(app, ctx, ctx.bus.repository);
  installMinSeqCheck(app, ctx.store);
  const tenancy = installTenancy(app, ctx);
  await installRateLimit(app, ctx.config);
  // A list of thousands of nodes or workflows is megabytes of JSON that compresses about tenfold (brotli at quality 4,
  // cheap for the API). The live streams write to the raw socket, past this hook, so no event waits in a buffer; the
  // console's bundles and blobs (octet-stream, ranges) already carry their own encoding or none.
  await app.register(fastifyCompress, { global: true, threshold: 4_096, encodings: ['br', 'gzip'] });

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Better Compute API', version: '1', description: 'Commands append events; queries read projections.' },
    },
    transform: jsonSchemaTransform,
  });

  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;
  await app.register(commandRoutes, { ctx, commands: operatorCommands });
  await app.register(eventRoutes, { ctx, tenancy, tokens });
  const deadLetters = new DeadLetterReader(ctx.store.jsm);
  const leases = new LeaseReader(ctx.nc);
  await app.register(healthRoutes, { ctx, deadLetters, leases });
  await app.register(deadLetterRoutes, { deadLetters });
  await app.register(projectionAdminRoutes, { ctx });
  // `connected` is what this process hears of the agents' heartbeats (in memory: heartbeats are not events).
  const presence = startAgentPresence(ctx.nc, { repository: ctx.bus.repository, windowMs: ctx.config.agentPresenceWindowMs, log });
  app.addHook('onClose', () => presence.stop());
  // The orchestrator's caps from the same settings (`npm start` gives every process one environment): why a node waits.
  await app.register(nodeRoutes, { reader: readerOf(ctx, 'nodes'), waitTimeoutMs, presence, caps: capsOf(loadWorkflowConfig()) });
  await app.register(poolRoutes, { ctx });
  await app.register(holdRoutes, { ctx, presence });
  await app.register(siteRoutes, { reader: readerOf(ctx, 'sites'), waitTimeoutMs });
  await app.register(moduleReadRoutes, { reader: readerOf(ctx, 'modules'), waitTimeoutMs });
  await app.register(fleetReadRoutes, { reader: readerOf(ctx, 'modules'), waitTimeoutMs });
  await app.register(rolloutReadRoutes, { reader: readerOf(ctx, 'modules'), waitTimeoutMs });
  await app.register(workflowRoutes, { reader: readerOf(ctx, 'workflows'), waitTimeoutMs });
  await app.register(trendRoutes, { reader: readerOf(ctx, 'trends'), waitTimeoutMs });
  await app.register(secretRoutes, { ctx });
  await app.register(tokenRoutes, { ctx, bus: ctx.bus });
  await app.register(approvalRoutes, { ctx, bus: ctx.bus });
  await app.register(autonomyRoutes, { reader: readerOf(ctx, 'autonomy'), waitTimeoutMs });
  await app.register(autonomyApiRoutes, { ctx, bus: ctx.bus });
  await app.register(joinTokenRoutes, { ctx });
  await app.register(pluginRoutes, { ctx });
  const commandResponders = new ResponderRoster();
  const announcements = listenToResponders(ctx.nc, log, (announcement) => commandResponders.hear(announcement));
  app.addHook('onClose', async () => announcements.unsubscribe());
  await app.register(serviceRoutes, { leases, commandResponders });
  await app.register(blobRoutes, { ctx });
  await app.register(moduleRoutes, { ctx });
  await app.register(assignmentRoutes, { ctx });
  await app.register(rolloutRoutes, { ctx });
  await app.register(vpsRoutes, { reader: readerOf(ctx, 'vps'), waitTimeoutMs });
  await app.register(nodeHistoryRoutes, { ctx, tenancy });
  await app.register(nodeLogRoutes, { ctx, tokens });
  await app.register(sessionRoutes);
  await app.register(consoleRoutes, { root: consoleDistDir });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  if (ctx.config.apiAuth === 'required') await ensureAdminToken(ctx.bus, ctx.config.dataDir, log);
  return app;
}
