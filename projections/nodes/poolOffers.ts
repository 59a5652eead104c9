import type { Database } from 'better-sqlite3';
import type { PoolOffer } from '../../schemas/metal/poolViews.ts';

/** The nodes a tenant may claim (`requireTenantAccess` with `claimUnowned`, `metal.deploy`'s state and maintenance rule). */
const claimable = `state = 'ready' AND maintenance = 0 AND owner_tenant_id IS NULL AND agent != 'none'`;

/** Free nodes by site, pool and hardware profile, with how many of each. */
export function poolOffers(db: Database): PoolOffer[] {
  return (
    db
      .prepare(
        `SELECT site_id, pool_id, hardware_profile, COUNT(*) AS available FROM nodes WHERE ${claimable}
         GROUP BY site_id, pool_id, hardware_profile ORDER BY site_id, pool_id, hardware_profile`,
      )
      .all() as { site_id: string; pool_id: string | null; hardware_profile: string; available: number }[]
  ).map((r) => ({ siteId: r.site_id, poolId: r.pool_id, hardwareProfile: r.hardware_profile, available: r.available }));
}

/** Up to `limit` claimable node ids of one offer, lowest first. */
export function claimableNodeIds(db: Database, offer: { siteId: string; poolId: string | null; hardwareProfile: string }, limit: number): string[] {
  return (
    db
      .prepare(
        `SELECT node_id FROM nodes WHERE ${claimable} AND site_id = @siteId AND pool_id IS @poolId AND hardware_profile = @hardwareProfile
         ORDER BY node_id LIMIT @limit`,
      )
      .all({ ...offer, limit }) as { node_id: string }[]
  ).map((r) => r.node_id);
}
