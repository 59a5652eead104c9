import { createHash, randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listNodes } from '../../projections/nodes/queries.ts';
import { holdById, listHolds } from '../../projections/vps/holdQueries.ts';
import type { AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import { CommandResult, MinSeqQuery, Problem } from '../../schemas/api.ts';
import type { NodeView } from '../../schemas/metal/views.ts';
import { PlaceHoldRequest, type HoldCandidate, type HoldHolder } from '../../schemas/vps/holdCommands.ts';
import { HoldView } from '../../schemas/vps/views.ts';
import { payloadDigest } from '../platform/commands/commandBus.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { placementCandidateOf } from '../vps/placement/candidates.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

const Headers = z.object({ 'idempotency-key': z.string().optional() }).passthrough();
const PAGE = 500;
const NOTHING = { vcpus: 0, memoryMib: 0, diskGib: 0 };

/** The tenant a tenant token acts for; null for operator roles, which see every holder. */
const callerTenant = (req: FastifyRequest): string | null => req.principal?.tenantId ?? null;

/** A tenant holds for itself; an operator names the holder. */
function holderOf(req: FastifyRequest, asked: HoldHolder | undefined): HoldHolder {
  const tenantId = callerTenant(req);
  if (tenantId === null) {
    if (!asked)
      throw new PlatformError('VALIDATION_FAILED', 'holder is required: { tenantId } or { poolId }', { issues: [{ path: 'holder', message: 'required' }] });
    return asked;
  }
  if (asked && !('tenantId' in asked && asked.tenantId === tenantId)) throw new PlatformError('FORBIDDEN', 'a tenant places holds only for itself');
  return { tenantId };
}

/**
 * Hold reservations (docs/vps.md#holds). `POST /v1/holds` reads the site's nodes from the nodes read model (effective
 * labels, capacity, whether each takes instances, its agent heard by this process) and sends `vps.placeHold` with
 * them; the site's hold book decides against its own holds, so the read model being behind never lets two holds
 * take the same capacity. What instances take of each node is not counted yet: no instance is placed on metal so far.
 * `GET /v1/holds` lists holds as they stand now (active, expired or released); `DELETE /v1/holds/:holdId` releases
 * one. A tenant token places, sees and releases only its own; another's is HOLD_UNKNOWN, as if it did not exist.
 */
export const holdRoutes: FastifyPluginAsync<{ ctx: ApiContext; presence?: AgentPresenceLookup }> = async (app, { ctx, presence }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const nodes = readerOf(ctx, 'nodes');
  const vps = readerOf(ctx, 'vps');
  const waitTimeoutMs = ctx.config.readYourWritesTimeoutMs;

  function candidatesAt(siteId: string): HoldCandidate[] {
    const views: NodeView[] = [];
    let cursor: string | undefined;
    do {
      const page = listNodes(nodes.db(), { siteId, limit: PAGE, ...(cursor ? { cursor } : {}) }, presence);
      views.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return views.map((view) => placementCandidateOf(view, NOTHING));
  }

  api.get('/v1/holds', {
    schema: {
      tags: ['vps'],
      summary: 'Hold reservations as they stand now (a tenant token: its own)',
      querystring: MinSeqQuery.extend({
        siteId: z.string().optional(),
        tenantId: z.string().optional(),
        status: z.enum(['active', 'expired', 'released']).optional(),
      }),
      response: { 200: z.object({ items: z.array(HoldView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await vps.waitFor(req.query.minSeq, waitTimeoutMs);
      const tenantId = callerTenant(req) ?? req.query.tenantId ?? null;
      return { items: listHolds(vps.db(), { tenantId, siteId: req.query.siteId ?? null, status: req.query.status ?? null }, Date.now()) };
    },
  });

  api.post('/v1/holds', {
    schema: {
      tags: ['vps'],
      summary: 'Hold capacity on nodes of a site for a tenant or a pool until it expires (vps.placeHold)',
      querystring: MinSeqQuery,
      headers: Headers,
      body: PlaceHoldRequest,
      response: { 201: CommandResult.extend({ holdId: z.string() }), 200: CommandResult.extend({ holdId: z.string() }), '4xx': Problem, '5xx': Problem },
    },
    handler: async (req, reply) => {
      await nodes.waitFor(req.query.minSeq, waitTimeoutMs);
      const key = req.headers['idempotency-key'];
      const actor = req.principal?.actor ?? 'http:anonymous';
      const { holdId: asked, holder: askedHolder, resources, ...rest } = req.body;
      const holder = holderOf(req, askedHolder);
      // A retry under the same key names the same hold, and is the same request whatever the nodes look like by then.
      const holdId = asked ?? (key === undefined ? `h-${randomUUID()}` : `h-${createHash('sha256').update(`${actor}\n${key}`).digest('hex').slice(0, 32)}`);
      const payload = { ...rest, holdId, holder, ...(resources ? { resources } : {}), candidates: candidatesAt(rest.siteId) };
      const result = await ctx.bus.execute({
        name: 'vps.placeHold',
        payload,
        ...(key !== undefined ? { idempotencyKey: key, requestDigest: payloadDigest({ ...req.body, holdId, holder }) } : {}),
        actor,
      });
      return reply.code(result.events.length > 0 && !result.duplicate ? 201 : 200).send({ ...result, holdId });
    },
  });

  api.delete('/v1/holds/:holdId', {
    schema: {
      tags: ['vps'],
      summary: 'Release a hold before it expires (vps.releaseHold); releasing one that no longer holds anything appends nothing',
      params: z.object({ holdId: z.string() }),
      querystring: MinSeqQuery,
      headers: Headers,
      response: { 200: CommandResult, '4xx': Problem, '5xx': Problem },
    },
    handler: async (req) => {
      await vps.waitFor(req.query.minSeq, waitTimeoutMs);
      const tenantId = callerTenant(req);
      const hold = holdById(vps.db(), req.params.holdId, tenantId, Date.now());
      if (!hold) throw new PlatformError('HOLD_UNKNOWN', `hold ${req.params.holdId} not found`);
      const key = req.headers['idempotency-key'];
      return ctx.bus.execute({
        name: 'vps.releaseHold',
        payload: { siteId: hold.siteId, holdId: hold.holdId, ...(tenantId !== null ? { tenantId } : {}) },
        ...(key !== undefined ? { idempotencyKey: key } : {}),
        actor: req.principal?.actor ?? 'http:anonymous',
      });
    },
  });
};
