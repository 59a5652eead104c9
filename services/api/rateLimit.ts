import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../platform/config.ts';
import { isPublicRoute } from './accessPolicy.ts';

/**
 * `BC_API_RATE_LIMIT_PER_MINUTE` requests per minute per token, or per client address for requests without a valid
 * token (so guessing tokens is throttled too). Runs after authentication found the principal and before anything
 * is refused or parsed; over the limit is 429 RATE_LIMITED (`problem.ts`) with `retry-after`. Probes and metrics are
 * not limited. Register before the routes: the plugin hooks each route as it is added.
 */
export async function installRateLimit(app: FastifyInstance, config: Pick<Config, 'apiRateLimitPerMinute'>): Promise<void> {
  if (config.apiRateLimitPerMinute === 0) return;
  await app.register(fastifyRateLimit, {
    max: config.apiRateLimitPerMinute,
    timeWindow: 60_000,
    hook: 'onRequest',
    // With authentication off every caller is the same anonymous principal: count them by address instead.
    keyGenerator: (req) => (req.principal?.actor.startsWith('token:') ? req.principal.actor : `ip:${req.ip}`),
    allowList: (req) => isPublicRoute(req.url),
  });
}
