import type { FastifyInstance } from 'fastify';
import { isTenantWorkflow, nodeOwnership } from '../../projections/nodes/tenancy.ts';
import type { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { instanceById } from '../../projections/vps/queries.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

/**
 * What a tenant owns, answered from the `nodes` read model: nodes it deployed or rescued (until they are back in
 * `ready`), the workflows that ran for it, and the events of both. Anything else is NOT_FOUND, exactly as if it did
 * not exist.
 */
export class Tenancy {
  constructor(
    private readonly nodes: ReadModelReader,
    private readonly waitTimeoutMs: number,
    private readonly vps?: ReadModelReader,
  ) {}

  ownsNode(tenantId: string, nodeId: string): boolean {
    return nodeOwnership(this.nodes.db(), nodeId)?.tenantId === tenantId;
  }

  ownsWorkflow(tenantId: string, workflowId: string): boolean {
    return isTenantWorkflow(this.nodes.db(), tenantId, workflowId);
  }

  /**
   * Whether a tenant may see an event batch of the log: a shared site's, one about a workflow that ran for it, one
   * of a node it owns from the moment it took the node on (not the history of earlier owners), or its own VPS events.
   */
  async canSee(tenantId: string, seq: number, subject: string, events: readonly StoredEvent[]): Promise<boolean> {
    const [, , module, type, id] = subject.split('.');
    if (!id) return false;
    if (module === 'site' && type === 'site') return true;
    if (module === 'vps') return this.canSeeVps(tenantId, seq, type, id, events);
    // The read model must have applied this batch before it can say who owned what at that point.
    await this.nodes.waitFor(seq, this.waitTimeoutMs).catch(() => undefined);
    if (module === 'metal' && type === 'workflow') return this.ownsWorkflow(tenantId, id);
    if (module !== 'metal' || type !== 'node') return false;
    const ranForTenant = events.some((e) => {
      const workflowId = (e.data as { workflowId?: unknown } | null)?.workflowId;
      return typeof workflowId === 'string' && this.ownsWorkflow(tenantId, workflowId);
    });
    if (ranForTenant) return true;
    const ownership = nodeOwnership(this.nodes.db(), id);
    return ownership?.tenantId === tenantId && ownership.ownedSinceSeq !== null && seq >= ownership.ownedSinceSeq;
  }

  /**
   * A tenant sees its own tenant aggregate and its instances. Every event on an instance's subject names the tenant
   * that holds the id (the deciders refuse anyone else), and the read model must list the instance as the tenant's.
   */
  private async canSeeVps(tenantId: string, seq: number, type: string | undefined, id: string, events: readonly StoredEvent[]): Promise<boolean> {
    if (type === 'tenant') return id === tenantId;
    if (type !== 'instance' || !this.vps) return false;
    if (!events.every((e) => (e.data as { tenantId?: unknown } | null)?.tenantId === tenantId)) return false;
    await this.vps.waitFor(seq, this.waitTimeoutMs).catch(() => undefined);
    return instanceById(this.vps.db(), id, tenantId) !== undefined;
  }

  /** Throws NOT_FOUND unless the tenant owns what the route's parameters name. */
  async requireOwned(tenantId: string, params: Record<string, unknown>, minSeq: number | undefined): Promise<void> {
    await this.nodes.waitFor(minSeq, this.waitTimeoutMs);
    if (typeof params.nodeId === 'string' && !this.ownsNode(tenantId, params.nodeId)) throw new PlatformError('NOT_FOUND', `node ${params.nodeId} not found`);
    if (typeof params.workflowId === 'string' && !this.ownsWorkflow(tenantId, params.workflowId)) {
      throw new PlatformError('NOT_FOUND', `workflow ${params.workflowId} not found`);
    }
  }
}

/**
 * An event as a tenant reads it: without the attempt nonce of `StepStarted`, from which the subjects and nonces of the
 * attempt's agent commands derive. A tenant's host holds a node-agent credential that may publish results for its
 * machine; knowing the nonce before the command goes out would let it publish on the very subject the executor reads.
 */
export function tenantView<E extends { type: string; data: unknown }>(event: E): E {
  if (event.type !== 'StepStarted' || typeof event.data !== 'object' || event.data === null || !('nonce' in event.data)) return event;
  const { nonce: _nonce, ...data } = event.data as Record<string, unknown>;
  return { ...event, data };
}

/**
 * Tenant requests: the resource a route's `:nodeId` or `:workflowId` names must be the tenant's (checked after
 * validation, before the handler), and workflow lists keep only the tenant's workflows (a node's history includes
 * its earlier owners').
 */
export function installTenancy(app: FastifyInstance, ctx: ApiContext): Tenancy {
  const tenancy = new Tenancy(readerOf(ctx, 'nodes'), ctx.config.readYourWritesTimeoutMs, ctx.readers.get('vps'));
  app.addHook('preHandler', async (req) => {
    const tenantId = req.principal?.tenantId;
    if (!tenantId || !req.routeOptions.url) return;
    const minSeq = (req.query as { minSeq?: unknown } | undefined)?.minSeq;
    await tenancy.requireOwned(tenantId, (req.params ?? {}) as Record<string, unknown>, typeof minSeq === 'number' ? minSeq : undefined);
  });
  app.addHook('preSerialization', async (req, _reply, payload: unknown) => {
    const tenantId = req.principal?.tenantId;
    if (!tenantId || req.routeOptions.url !== '/v1/nodes/:nodeId/workflows') return payload;
    const page = payload as { items?: unknown };
    if (!Array.isArray(page.items)) return payload;
    return { ...page, items: (page.items as { workflowId: string }[]).filter((w) => tenancy.ownsWorkflow(tenantId, w.workflowId)) };
  });
  return tenancy;
}
