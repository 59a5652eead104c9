import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MinSeqQuery, pageOf, Problem } from '../../schemas/api.ts';
import { AssignmentView, TemplateView } from '../../schemas/fleet/views.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { ReadModelReader } from '../runtime/readModelReader.ts';
import { getAssignment, getTemplate, listAssignments, listTemplates } from './queries.ts';

/** `GET /v1/fleet/templates[/:templateId]` and `GET /v1/fleet/assignments[/:nodeId]`, with `?minSeq=` read-your-writes. */
export const fleetReadRoutes: FastifyPluginAsync<{ reader: ReadModelReader; waitTimeoutMs: number }> = async (app, { reader, waitTimeoutMs }) => {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/v1/fleet/templates', {
    schema: {
      tags: ['modules'],
      summary: 'All templates',
      querystring: MinSeqQuery,
      response: { 200: z.object({ items: z.array(TemplateView) }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      return { items: listTemplates(reader.db()) };
    },
  });

  api.get('/v1/fleet/templates/:templateId', {
    schema: {
      tags: ['modules'],
      summary: 'One template and how many hosts are assigned it',
      params: z.object({ templateId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: TemplateView.extend({ hostCount: z.number().int() }), '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const template = getTemplate(reader.db(), req.params.templateId);
      if (!template) throw new PlatformError('NOT_FOUND', `template ${req.params.templateId} is not defined`);
      return template;
    },
  });

  api.get('/v1/fleet/assignments', {
    schema: {
      tags: ['modules'],
      summary: "Hosts' assignments in node order (those whose plan has one module, or of one template), a page at a time",
      querystring: MinSeqQuery.extend({
        module: z.string().optional(),
        template: z.string().optional(),
        cursor: z.string().optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
      response: { 200: pageOf(AssignmentView), '4xx': Problem },
    },
    handler: async (req) => {
      const { minSeq, ...filter } = req.query;
      await reader.waitFor(minSeq, waitTimeoutMs);
      return listAssignments(reader.db(), filter);
    },
  });

  api.get('/v1/fleet/assignments/:nodeId', {
    schema: {
      tags: ['modules'],
      summary: "A host's assignment: its template, pins and plan",
      params: z.object({ nodeId: z.string() }),
      querystring: MinSeqQuery,
      response: { 200: AssignmentView, '4xx': Problem },
    },
    handler: async (req) => {
      await reader.waitFor(req.query.minSeq, waitTimeoutMs);
      const assignment = getAssignment(reader.db(), req.params.nodeId);
      if (!assignment) throw new PlatformError('NOT_FOUND', `node ${req.params.nodeId} has no assignment`);
      return assignment;
    },
  });
};
