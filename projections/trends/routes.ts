import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { maxTrendHours, TrendsView } from '../../schemas/metal/trendViews.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { msPerHour } from './hours.ts';
import { trendsOf } from './queries.ts';

const Instant = z.string().datetime({ offset: true });

/**
 * `GET /v1/trends?site=&from=&to=`: hourly buckets of the `trends` read model (default: the last 24 hours, all sites).
 * A tenant token reads its own tenant's operations only: never another's figures, nor a total that holds them.
 */
export const trendRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number; now?: () => number }> = async (
  app,
  { reader, waitTimeoutMs, now = Date.now },
) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/trends', {
    schema: {
      tags: ['trends'],
      summary: 'Deploys and releases per hour, failures by code, step durations (p50/p95) and throughput, the capacity queue',
      querystring: MinSeqQuery.extend({
        site: z.string().min(1).optional(),
        from: Instant.optional().describe('inclusive, rounded down to its hour; default: 23 hours before `to` (24 hour buckets)'),
        to: Instant.optional().describe('the range ends with the hour this falls in; default: now'),
      }),
      response: { 200: TrendsView, '4xx': Problem },
    },
    handler: async (req) => {
      const toMs = req.query.to ? Date.parse(req.query.to) : now();
      // By default the 24 whole hours that end with the current one.
      const fromMs = req.query.from ? Date.parse(req.query.from) : toMs - 23 * msPerHour;
      if (fromMs >= toMs) throw new PlatformError('VALIDATION_FAILED', '`from` must be before `to`');
      if (toMs - fromMs > maxTrendHours * msPerHour) throw new PlatformError('VALIDATION_FAILED', `a range is at most ${maxTrendHours} hours`);
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return trendsOf(reader.db(), { siteId: req.query.site ?? null, tenantId: req.principal?.tenantId ?? null, fromMs, toMs });
    },
  });
};
