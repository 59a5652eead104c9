import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { nodeOwnership, nodeSiteOf } from '../../projections/nodes/tenancy.ts';
import { NodeLogPage } from '../../schemas/agent/nodeLog.ts';
import { Problem } from '../../schemas/api.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';
import type { TokenCheck } from './authentication.ts';
import { serveLiveStream, sseFrame } from './liveStream.ts';
import { entryOf, NODE_LOG_PAGE_MAX, readNodeLogs, type NodeLogScope } from './nodeLogReader.ts';

const Query = z.object({
  since: z.coerce.number().int().nonnegative().optional().describe('A BC_LOGS sequence: lines after it (absent: the newest `limit` lines)'),
  limit: z.coerce.number().int().min(1).max(NODE_LOG_PAGE_MAX).default(500),
  follow: z.enum(['0', '1', 'true', 'false']).optional().describe('1: server-sent events, `line` per stored line, until the client goes'),
});

/**
 * `GET /v1/nodes/:nodeId/logs`: what the node's agents printed (BC_LOGS), a JSON page, or live as server-sent events
 * with `follow=1` (each `line` event's id is its sequence: an EventSource resumes with Last-Event-ID). A tenant must
 * own the node (the node routes' rule, checked by `tenancy.ts`) and reads only lines stored since it took the node on.
 */
export const nodeLogRoutes: FastifyPluginAsync<{ ctx: ApiContext; tokens: TokenCheck }> = async (app, { ctx, tokens }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const nodes = readerOf(ctx, 'nodes');

  /** The node's site, and for a tenant the broker time of the event that gave it the node. */
  const scopeOf = async (nodeId: string, tenantId: string | undefined): Promise<NodeLogScope> => {
    const siteId = nodeSiteOf(nodes.db(), nodeId);
    if (!siteId) throw new PlatformError('NOT_FOUND', `node ${nodeId} not found`);
    if (!tenantId) return { siteId, nodeId };
    const since = nodeOwnership(nodes.db(), nodeId)?.ownedSinceSeq;
    const owned = since ? await ctx.store.jsm.direct.getMessage(Streams.events.name, { seq: since }).catch(() => null) : null;
    // No instant to start from: nothing is the tenant's to read (never everything).
    return { siteId, nodeId, visibleFrom: owned?.time ?? new Date(8.64e15) };
  };

  api.get('/v1/nodes/:nodeId/logs', {
    schema: {
      tags: ['nodes'],
      summary: "A node's log: its site agent's, ramdisk's and node agent's step output and serial console lines; `follow=1` streams them as server-sent events",
      params: z.object({ nodeId: ResourceId }),
      querystring: Query,
      headers: z.object({ 'last-event-id': z.coerce.number().int().nonnegative().optional() }),
      response: { 200: NodeLogPage, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      const scope = await scopeOf(req.params.nodeId, req.principal?.tenantId ?? undefined);
      const { since, limit } = req.query;
      const follow = req.query.follow === '1' || req.query.follow === 'true';
      if (!follow) return readNodeLogs(ctx.store.js, ctx.store.jsm, scope, since, limit);

      // Without a place to resume from, the newest lines first, then everything after them as it is stored.
      const resumeAfter = req.headers['last-event-id'] ?? since;
      const backlog = resumeAfter === undefined ? await readNodeLogs(ctx.store.js, ctx.store.jsm, scope, undefined, limit) : undefined;
      const after = backlog?.lastSeq ?? resumeAfter ?? 0;
      return serveLiveStream(ctx, tokens, req, reply, {
        stream: Streams.logs.name,
        filter: Subjects.nodeLogs(scope.siteId, scope.nodeId),
        after,
        label: 'node log stream',
        preamble: (backlog?.items ?? []).map((entry) => sseFrame(entry.seq, 'line', entry)),
        frame: (msg) => {
          const entry = entryOf(scope, { subject: msg.subject, seq: msg.seq, data: msg.data, time: msg.time });
          return entry && sseFrame(entry.seq, 'line', entry);
        },
      });
    },
  });
};
