import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, Problem } from '../../schemas/api.ts';
import { AccountView, FlavorView, InstanceView, PoolView, QuotaView, TenantView } from '../../schemas/vps/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getTenant, instanceById, listAccounts, listFlavors, listInstances, listPools, listTenants, quotaOf } from './queries.ts';

/** The tenant a tenant token acts for; null for operator roles, which see every tenant. */
const callerTenant = (req: FastifyRequest): string | null => req.principal?.tenantId ?? null;

/** A tenant naming another tenant is answered as if that tenant did not exist. */
function requireVisibleTenant(req: FastifyRequest, tenantId: string): void {
  const caller = callerTenant(req);
  if (caller !== null && caller !== tenantId) throw new PlatformError('NOT_FOUND', `tenant ${tenantId} not found`);
}

/**
 * The `vps` read model's routes, with `?minSeq=` read-your-writes. A tenant token sees its own tenant, quota and
 * instances, and the pools and flavors offered to it; another tenant's are NOT_FOUND.
 */
export const vpsRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const TenantParams = z.object({ tenantId: z.string() });

  api.get('/v1/tenants', {
    schema: {
      tags: ['vps'],
      summary: 'VPS tenants with their quota',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(TenantView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listTenants(reader.db(), { tenantId: callerTenant(req) }) };
    },
  });

  api.get('/v1/tenants/:tenantId', {
    schema: { tags: ['vps'], summary: 'One tenant', params: TenantParams, querystring: MinSeqQuery, response: { 200: TenantView, '4xx': Problem } },
    handler: async (req) => {
      requireVisibleTenant(req, req.params.tenantId);
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const tenant = getTenant(reader.db(), req.params.tenantId);
      if (!tenant) throw new PlatformError('NOT_FOUND', `tenant ${req.params.tenantId} not found`);
      return tenant;
    },
  });

  api.get('/v1/tenants/:tenantId/quota', {
    schema: {
      tags: ['vps'],
      summary: "A tenant's quota: limit, used and reserved",
      params: TenantParams,
      querystring: MinSeqQuery,
      response: { 200: QuotaView, '4xx': Problem },
    },
    handler: async (req) => {
      requireVisibleTenant(req, req.params.tenantId);
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const quota = quotaOf(reader.db(), req.params.tenantId);
      if (!quota) throw new PlatformError('NOT_FOUND', `tenant ${req.params.tenantId} not found`);
      return quota;
    },
  });

  api.get('/v1/vps/instances', {
    schema: {
      tags: ['vps'],
      summary: 'Instances (a tenant token: its own)',
      querystring: MinSeqQuery.extend({ tenantId: z.string().optional(), poolId: z.string().optional() }),
      response: { 200: z.object({ items: z.array(InstanceView) }), '4xx': Problem },
    },
    handler: async (req) => {
      if (req.query.tenantId !== undefined) requireVisibleTenant(req, req.query.tenantId);
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listInstances(reader.db(), { tenantId: callerTenant(req) ?? req.query.tenantId ?? null, poolId: req.query.poolId ?? null }) };
    },
  });

  api.get('/v1/vps/instances/:instanceId', {
    schema: {
      tags: ['vps'],
      summary: 'One instance',
      params: z.object({ instanceId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: InstanceView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const instance = instanceById(reader.db(), req.params.instanceId, callerTenant(req));
      if (!instance) throw new PlatformError('NOT_FOUND', `instance ${req.params.instanceId} not found`);
      return instance;
    },
  });

  api.get('/v1/vps/pools', {
    schema: {
      tags: ['vps'],
      summary: 'Pools (a tenant token: those offered to it)',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(PoolView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listPools(reader.db(), { tenantId: callerTenant(req) }) };
    },
  });

  api.get('/v1/vps/flavors', {
    schema: {
      tags: ['vps'],
      summary: 'Flavors and their offers per pool (a tenant token: in pools offered to it)',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(FlavorView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listFlavors(reader.db(), { tenantId: callerTenant(req) }) };
    },
  });

  api.get('/v1/vps/accounts', {
    schema: {
      tags: ['vps'],
      summary: 'Provider accounts (the token secret id, never the token)',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(AccountView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listAccounts(reader.db()) };
    },
  });
};
