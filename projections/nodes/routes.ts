import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, pageOf, Problem } from '../../schemas/api.ts';
import { FleetSummary } from '../../schemas/metal/fleetViews.ts';
import { selectorOfTerms } from '../../schemas/metal/labelSelectorTerms.ts';
import { nodeStates } from '../../schemas/metal/nodeState.ts';
import { nodeRowOf } from '../../schemas/metal/nodeRow.ts';
import { NodeRowView, NodeView } from '../../schemas/metal/views.ts';
import type { AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import type { CapacityCaps } from '../../schemas/metal/workflow.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { fleetSummary } from './fleetSummary.ts';
import { getNode, listNodes } from './queries.ts';

/**
 * `GET /v1/nodes`, `GET /v1/nodes/:nodeId` and `GET /v1/fleet/summary`, with `?minSeq=` read-your-writes. `connected`
 * and `lastHeartbeat` come from `presence`, the agents' heartbeats this process hears; `waitingFor` from `caps`, the
 * orchestrator's caps as this process reads them from the same settings.
 */
export const nodeRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number; presence?: AgentPresenceLookup; caps?: CapacityCaps }> = async (
  app,
  { reader, waitTimeoutMs, presence, caps },
) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/nodes', {
    schema: {
      tags: ['nodes'],
      summary: 'Nodes, filtered by site, state, pool, tenant, labels and a search, ordered by id',
      querystring: MinSeqQuery.extend({
        siteId: z.string().optional(),
        state: z.enum(nodeStates).optional(),
        poolId: z.string().optional(),
        tenantId: z.string().optional().describe('the owning tenant (a tenant token: always its own)'),
        q: z.string().trim().min(1).max(100).optional().describe('part of the node id, a MAC, an address or the serial (any case)'),
        label: z
          .union([z.string(), z.array(z.string())])
          .optional()
          .describe('key=value (the label has that value) or key (the node carries it); repeated or comma-separated terms are AND-ed'),
        cursor: z.string().optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        view: z.enum(['full', 'row']).default('full').describe('row: what a list of thousands shows (NodeRowView), without inventories and labels'),
      }),
      response: { 200: z.union([pageOf(NodeView), pageOf(NodeRowView)]), '4xx': Problem },
    },
    handler: async (req) => {
      const { label, view, ...query } = req.query;
      const selected = label === undefined ? undefined : selectorOfTerms(typeof label === 'string' ? [label] : label);
      if (selected && 'problem' in selected) throw new PlatformError('LABEL_SELECTOR_INVALID', selected.problem);
      await reader.waitFor(query.minSeq, waitTimeoutMs);
      // A tenant's list holds its own nodes only (ownership is checked per node on the other routes).
      const tenantId = req.principal?.tenantId ?? query.tenantId ?? null;
      const page = listNodes(reader.db(), { ...query, tenantId, ...(selected ? { selector: selected.selector } : {}) }, presence, caps);
      return view === 'row' ? { ...page, items: page.items.map(nodeRowOf) } : page;
    },
  });

  api.get('/v1/nodes/:nodeId', {
    schema: {
      tags: ['nodes'],
      summary: 'One node',
      params: z.object({ nodeId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: NodeView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const node = getNode(reader.db(), req.params.nodeId, presence, caps);
      if (!node) throw new PlatformError('NOT_FOUND', `node ${req.params.nodeId} not found`);
      return node;
    },
  });

  api.get('/v1/fleet/summary', {
    schema: {
      tags: ['nodes'],
      summary: 'Node counts per site: by state, in maintenance, waiting for capacity, failed (a tenant: its own nodes)',
      querystring: MinSeqQuery,
      response: { 200: FleetSummary, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return fleetSummary(reader.db(), { tenantId: req.principal?.tenantId ?? null });
    },
  });
};
