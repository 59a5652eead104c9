import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { eventCatalog } from '../../schemas/events.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ApiContext } from './apiContext.ts';
import type { TokenCheck } from './authentication.ts';
import { serveLiveStream, sseFrame } from './liveStream.ts';
import { tenantView, type Tenancy } from './tenancy.ts';

const AggregateRef = z
  .string()
  .regex(/^[a-z]+\.[a-z][A-Za-z]*\/[a-z0-9][a-z0-9_-]{0,120}$/, 'must look like metal.node/<id>')
  .describe('`<module>.<aggregate>/<id>`, e.g. metal.node/n1');

const EventView = z.object({
  seq: z.number().int(),
  subject: z.string(),
  type: z.string(),
  version: z.number().int(),
  data: z.unknown(),
  metadata: z.record(z.string(), z.string()),
});

const SubjectFilter = z
  .string()
  .regex(/^bc\.evt(\.[A-Za-z0-9_*-]+)*(\.>)?$/, 'must be a subject under bc.evt, e.g. bc.evt.metal.>')
  .default(Subjects.allEvents);

/**
 * An aggregate's history (upcast to current versions) and a live SSE stream of the log. A tenant sees only batches
 * `Tenancy.canSee` allows, each event as `tenantView` shows it: an aggregate with nothing visible is NOT_FOUND, and the
 * stream skips what is not theirs. A stream ends, with a last `end` event saying why, within a second or so of its token
 * being revoked or expiring: plain requests answer 401 then, and a stream must not go on delivering.
 */
export const eventRoutes: FastifyPluginAsync<{ ctx: ApiContext; tenancy: Tenancy; tokens: TokenCheck }> = async (app, { ctx, tenancy, tokens }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/events', {
    schema: {
      tags: ['events'],
      summary: "An aggregate's event history, oldest first",
      querystring: z.object({ aggregate: AggregateRef, afterSeq: z.coerce.number().int().nonnegative().default(0) }),
      response: { 200: z.object({ items: z.array(EventView) }) },
    },
    handler: async (req) => {
      const [moduleAndType, id] = req.query.aggregate.split('/') as [string, string];
      const [module, type] = moduleAndType.split('.') as [string, string];
      ResourceId.parse(id);
      const tenantId = req.principal?.tenantId;
      const items: z.infer<typeof EventView>[] = [];
      for await (const stored of ctx.store.readAfter(Subjects.aggregateEvents(module, type, id), req.query.afterSeq)) {
        if (tenantId && !(await tenancy.canSee(tenantId, stored.seq, stored.subject, stored.batch.events))) continue;
        for (const event of stored.batch.events) {
          const read = eventCatalog.has(event.type) ? eventCatalog.read(event) : { type: event.type, data: event.data };
          const current = tenantId ? tenantView(read) : read;
          const version = eventCatalog.definition(event.type)?.version ?? event.version;
          items.push({ seq: stored.seq, subject: stored.subject, type: current.type, version, data: current.data, metadata: event.metadata });
        }
        if (items.length >= 1_000) break;
      }
      // Empty or hidden alike: a tenant cannot tell another's aggregate from one that does not exist.
      if (tenantId && items.length === 0) throw new PlatformError('NOT_FOUND', `no events of ${req.query.aggregate}`);
      return { items };
    },
  });

  api.get('/v1/events/stream', {
    schema: {
      tags: ['events'],
      summary:
        'Server-sent events: `connected` with the sequence the stream starts after, then every new event batch on a subject filter; resume with Last-Event-ID (a stream sequence)',
      querystring: z.object({ subject: SubjectFilter }),
      headers: z.object({ 'last-event-id': z.coerce.number().int().nonnegative().optional() }),
    },
    handler: async (req, reply) => {
      // A new stream starts just past the log's end as it is now, and says where (`connected`): a page that loaded its
      // data before the stream was open reloads no older than that, so an event stored in between is never missed.
      const after = req.headers['last-event-id'] ?? (await ctx.store.streamLastSequence());
      const tenantId = req.principal?.tenantId;
      return serveLiveStream(ctx, tokens, req, reply, {
        stream: Streams.events.name,
        filter: req.query.subject,
        after,
        label: 'event stream',
        frame: async (m) => {
          // Only what the event store wrote is shown: a raw publish on bc.evt.> is not an event.
          const { batch } = ctx.store.decode(m);
          if (!batch) return undefined;
          if (tenantId && !(await tenancy.canSee(tenantId, m.seq, m.subject, batch.events))) return undefined;
          return sseFrame(m.seq, 'events', { seq: m.seq, subject: m.subject, events: tenantId ? batch.events.map(tenantView) : batch.events });
        },
      });
    },
  });
};
