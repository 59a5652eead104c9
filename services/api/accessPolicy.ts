import type { Principal } from '../../schemas/auth/roles.ts';
import { adminOnlyCommandNames, tenantCommandNames } from './commandCatalog.ts';

/** `allow`; `forbidden` (403: the role may not); `hidden` (404: a tenant is not told the resource exists). */
export type Access = 'allow' | 'forbidden' | 'hidden';

/** Routes with no token at all: everything outside `/v1/` (probes, metrics, the console's files), the API's own description. */
export function isPublicRoute(url: string): boolean {
  const path = url.split('?')[0]!;
  if (path !== '/v1' && !path.startsWith('/v1/')) return true;
  // Blob URLs carry their own capability (the BMC that mounts an ISO has no bearer token); the join credential is
  // public by design (it may only ask to join).
  return path === '/v1/openapi.json' || path.startsWith('/v1/blobs/') || path === '/v1/join-creds';
}

/**
 * What a tenant may read. Everything else is hidden (deny by default): a route added later is invisible to tenants
 * until it is listed here with its ownership rule (`tenancy.ts`).
 */
const tenantReadable: ReadonlySet<string> = new Set([
  '/v1/nodes',
  '/v1/nodes/:nodeId',
  '/v1/nodes/:nodeId/workflows',
  '/v1/nodes/:nodeId/history',
  // only lines stored since the tenant took the node on (nodeLogRoutes.ts)
  '/v1/nodes/:nodeId/logs',
  '/v1/fleet/summary',
  '/v1/session',
  '/v1/workflows/:workflowId',
  '/v1/sites',
  '/v1/sites/:siteId',
  '/v1/events',
  '/v1/events/stream',
  // vps routes filter to the caller's tenant themselves (projections/vps/routes.ts).
  '/v1/tenants',
  '/v1/tenants/:tenantId',
  '/v1/tenants/:tenantId/quota',
  '/v1/vps/instances',
  '/v1/vps/instances/:instanceId',
  '/v1/vps/pools',
  '/v1/vps/flavors',
  '/v1/holds',
  // free nodes by group, never one by id (poolRoutes.ts)
  '/v1/pool/offers',
  // the tenant's own operations only (projections/trends/routes.ts)
  '/v1/trends',
]);

const reads = new Set(['GET', 'HEAD']);

/**
 * The role check, by route pattern (`/v1/nodes/:nodeId`) and method. Ownership of the resource a tenant names is
 * checked after this, once the parameters are validated.
 */
export function accessOf(principal: Principal, method: string, route: string | undefined): Access {
  const path = route ?? '';
  if (principal.role === 'tenant') {
    if (path.startsWith('/v1/commands/')) return tenantCommandNames.has(path.slice('/v1/commands/'.length)) ? 'allow' : 'forbidden';
    // metal.deploy on a free node the API picks: the tenant's own command, as the route above would send it.
    if (path === '/v1/pool/allocate' && method === 'POST') return 'allow';
    // Holds for itself; the routes scope both to the caller's tenant (holdRoutes.ts).
    if ((path === '/v1/holds' && method === 'POST') || (path === '/v1/holds/:holdId' && method === 'DELETE')) return 'allow';
    return reads.has(method) && tenantReadable.has(path) ? 'allow' : 'hidden';
  }
  // Who approves must not be who operates or administers: a workflow's batch is answered by approvers alone (it exists
  // only under a quorum). An autonomy request may also be answered by an admin, but only while no quorum is set
  // (`autonomyApiRoutes.ts` checks that): an admin who wants to approve under a quorum must change the approver set
  // first, which the log records.
  if (path.startsWith('/v1/approvals/') && !reads.has(method)) return principal.role === 'approver' ? 'allow' : 'forbidden';
  // A rollout awaits approval only under a quorum, whose approvers alone answer it (as a workflow's batch).
  if ((path === '/v1/rollouts/:rolloutId/approve' || path === '/v1/rollouts/:rolloutId/reject') && !reads.has(method)) {
    return principal.role === 'approver' ? 'allow' : 'forbidden';
  }
  if (path.startsWith('/v1/autonomy/decisions/') && !reads.has(method))
    return principal.role === 'approver' || principal.role === 'admin' ? 'allow' : 'forbidden';
  if (principal.role === 'admin') return 'allow';
  if (path === '/v1/tokens' || path.startsWith('/v1/tokens/') || path === '/v1/join-tokens') return 'forbidden';
  if (path === '/v1/dead-letters' || path.startsWith('/v1/dead-letters/')) return principal.role === 'operator' ? 'allow' : 'forbidden';
  if (path.startsWith('/v1/commands/') && adminOnlyCommandNames.has(path.slice('/v1/commands/'.length))) return 'forbidden';
  if (principal.role === 'operator') return 'allow';
  // viewer and approver read everything but tokens (checking a profile or planning a rollout changes nothing, so it
  // counts as a read: an approver reads the rollout plan whose digest it signs); approving gets routes of its own.
  return reads.has(method) || path === '/v1/profiles/validate' || path === '/v1/rollouts/plan' ? 'allow' : 'forbidden';
}
