import type { Database } from 'better-sqlite3';
import type { Resources } from '../../schemas/vps/tenantCommands.ts';
import {
  instanceStateOf,
  type AccountView,
  type FlavorView,
  type InstancePlacementView,
  type InstanceView,
  type PoolView,
  type QuotaStatus,
  type QuotaView,
  type TenantView,
} from '../../schemas/vps/views.ts';
import type { DesiredInstanceState, ObservedInstanceState } from '../../schemas/vps/instanceCommands.ts';

interface TenantRow {
  tenant_id: string;
  name: string;
  quota_instances: number;
  quota_vcpus: number;
  quota_memory_mib: number;
  quota_disk_gib: number;
  created_at: string;
  updated_at: string;
}

interface InstanceRow {
  tenant_id: string;
  instance_id: string;
  pool_id: string;
  flavor_id: string;
  image: string;
  ssh_keys: string;
  has_user_data: number;
  instances: number;
  vcpus: number;
  memory_mib: number;
  disk_gib: number;
  quota_status: QuotaStatus;
  desired: DesiredInstanceState;
  observed: ObservedInstanceState | null;
  provider_instance_id: string | null;
  addresses: string;
  message: string | null;
  placement: string | null;
  requested_at: string;
  updated_at: string;
}

const sums = (row: { instances: number | null; vcpus: number | null; memory_mib: number | null; disk_gib: number | null } | undefined): Resources => ({
  instances: row?.instances ?? 0,
  vcpus: row?.vcpus ?? 0,
  memoryMib: row?.memory_mib ?? 0,
  diskGib: row?.disk_gib ?? 0,
});

function quotaOfRow(db: Database, row: TenantRow): QuotaView {
  const usage = (status: QuotaStatus) =>
    sums(
      db
        .prepare(
          'SELECT SUM(instances) AS instances, SUM(vcpus) AS vcpus, SUM(memory_mib) AS memory_mib, SUM(disk_gib) AS disk_gib FROM vps_instances WHERE tenant_id = ? AND quota_status = ?',
        )
        .get(row.tenant_id, status) as never,
    );
  const limit = { instances: row.quota_instances, vcpus: row.quota_vcpus, memoryMib: row.quota_memory_mib, diskGib: row.quota_disk_gib };
  return { limit, used: usage('used'), reserved: usage('reserved') };
}

const toTenant = (db: Database, r: TenantRow): TenantView => ({
  tenantId: r.tenant_id,
  name: r.name,
  quota: quotaOfRow(db, r),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Every tenant, or only `tenantId` (what a tenant token may see). */
export function listTenants(db: Database, filter: { tenantId?: string | null } = {}): TenantView[] {
  const rows = db
    .prepare('SELECT * FROM vps_tenants WHERE (@tenantId IS NULL OR tenant_id = @tenantId) ORDER BY tenant_id')
    .all({ tenantId: filter.tenantId ?? null }) as TenantRow[];
  return rows.map((r) => toTenant(db, r));
}

export function getTenant(db: Database, tenantId: string): TenantView | undefined {
  const row = db.prepare('SELECT * FROM vps_tenants WHERE tenant_id = ?').get(tenantId) as TenantRow | undefined;
  return row && toTenant(db, row);
}

/** The tenant's quota limits, used (instances that ran) and reserved (requested, not yet running); released count nowhere. */
export function quotaOf(db: Database, tenantId: string): QuotaView | undefined {
  const row = db.prepare('SELECT * FROM vps_tenants WHERE tenant_id = ?').get(tenantId) as TenantRow | undefined;
  return row && quotaOfRow(db, row);
}

const toInstance = (r: InstanceRow): InstanceView => ({
  instanceId: r.instance_id,
  tenantId: r.tenant_id,
  poolId: r.pool_id,
  flavorId: r.flavor_id,
  image: r.image,
  sshKeys: JSON.parse(r.ssh_keys) as string[],
  hasUserData: r.has_user_data === 1,
  resources: { instances: r.instances, vcpus: r.vcpus, memoryMib: r.memory_mib, diskGib: r.disk_gib },
  quotaStatus: r.quota_status,
  desired: r.desired,
  observed: r.observed,
  state: instanceStateOf(r.desired, r.observed, r.quota_status),
  providerInstanceId: r.provider_instance_id,
  addresses: JSON.parse(r.addresses) as string[],
  message: r.message,
  placement: r.placement === null ? null : (JSON.parse(r.placement) as InstancePlacementView),
  requestedAt: r.requested_at,
  updatedAt: r.updated_at,
});

/** Instances ordered by id, optionally of one tenant and/or one pool. */
export function listInstances(db: Database, filter: { tenantId?: string | null; poolId?: string | null } = {}): InstanceView[] {
  const rows = db
    .prepare(
      'SELECT * FROM vps_instances WHERE (@tenantId IS NULL OR tenant_id = @tenantId) AND (@poolId IS NULL OR pool_id = @poolId) ORDER BY instance_id, tenant_id',
    )
    .all({ tenantId: filter.tenantId ?? null, poolId: filter.poolId ?? null }) as InstanceRow[];
  return rows.map(toInstance);
}

/** One instance; with `tenantId`, only if it is that tenant's (undefined otherwise, as if it did not exist). */
export function instanceById(db: Database, instanceId: string, tenantId: string | null = null): InstanceView | undefined {
  const row = db
    .prepare(
      'SELECT * FROM vps_instances WHERE instance_id = @instanceId AND (@tenantId IS NULL OR tenant_id = @tenantId) ORDER BY requested_at, rowid LIMIT 1',
    )
    .get({ instanceId, tenantId }) as InstanceRow | undefined;
  return row && toInstance(row);
}

interface PoolRow {
  pool_id: string;
  class: PoolView['class'];
  agent: PoolView['agent'];
  account_id: string | null;
  site_id: string | null;
  policy: string;
  runtime: string | null;
  warm: string | null;
  created_at: string;
}

/** Pools by id; for a tenant only the ones offered to it, and `offeredTo` names no other tenant. */
export function listPools(db: Database, filter: { tenantId?: string | null } = {}): PoolView[] {
  const tenantId = filter.tenantId ?? null;
  const rows = db
    .prepare(
      'SELECT * FROM vps_pools p WHERE @tenantId IS NULL OR EXISTS (SELECT 1 FROM vps_pool_offers o WHERE o.pool_id = p.pool_id AND o.tenant_id = @tenantId) ORDER BY pool_id',
    )
    .all({ tenantId }) as PoolRow[];
  const offers = db.prepare('SELECT tenant_id FROM vps_pool_offers WHERE pool_id = ? ORDER BY tenant_id');
  const slots = db.prepare(
    'SELECT flavor_id, image, COUNT(ready_at) AS ready, COUNT(*) - COUNT(ready_at) AS preparing FROM vps_warm_slots WHERE pool_id = ? GROUP BY flavor_id, image',
  );
  const warmOf = (r: PoolRow): PoolView['warm'] => {
    if (r.warm === null) return undefined;
    const setting = JSON.parse(r.warm) as { flavors: { flavorId: string; image: string; count: number }[]; maxSlotAgeSeconds: number };
    const counted = slots.all(r.pool_id) as { flavor_id: string; image: string; ready: number; preparing: number }[];
    const of = (f: { flavorId: string; image: string }) => counted.find((c) => c.flavor_id === f.flavorId && c.image === f.image);
    const flavors = setting.flavors.map((f) => ({ ...f, ready: of(f)?.ready ?? 0, preparing: of(f)?.preparing ?? 0 }));
    return { flavors, maxSlotAgeSeconds: setting.maxSlotAgeSeconds };
  };
  return rows.map((r) => ({
    poolId: r.pool_id,
    class: r.class,
    agent: r.agent,
    accountId: r.account_id,
    siteId: r.site_id,
    policy: JSON.parse(r.policy) as PoolView['policy'],
    ...(r.runtime !== null ? { runtime: r.runtime } : {}),
    ...(r.warm !== null ? { warm: warmOf(r) } : {}),
    offeredTo: tenantId === null ? (offers.all(r.pool_id) as { tenant_id: string }[]).map((o) => o.tenant_id) : [tenantId],
    createdAt: r.created_at,
  }));
}

/** Flavors by id with their offers; for a tenant only the ones sold in pools offered to it, with those offers. */
export function listFlavors(db: Database, filter: { tenantId?: string | null } = {}): FlavorView[] {
  const tenantId = filter.tenantId ?? null;
  const rows = db.prepare('SELECT * FROM vps_flavors ORDER BY flavor_id').all() as {
    flavor_id: string;
    vcpus: number;
    memory_mib: number;
    disk_gib: number;
    created_at: string;
  }[];
  const offers = db.prepare(
    `SELECT pool_id, offer_id FROM vps_flavor_offers f WHERE flavor_id = @flavorId
       AND (@tenantId IS NULL OR EXISTS (SELECT 1 FROM vps_pool_offers o WHERE o.pool_id = f.pool_id AND o.tenant_id = @tenantId)) ORDER BY pool_id`,
  );
  return rows
    .map((r) => ({
      flavorId: r.flavor_id,
      vcpus: r.vcpus,
      memoryMib: r.memory_mib,
      diskGib: r.disk_gib,
      offers: (offers.all({ flavorId: r.flavor_id, tenantId }) as { pool_id: string; offer_id: string }[]).map((o) => ({
        poolId: o.pool_id,
        offerId: o.offer_id,
      })),
      createdAt: r.created_at,
    }))
    .filter((f) => tenantId === null || f.offers.length > 0);
}

/** Provider accounts by id: the token secret's id only (the table has no token to show). */
export function listAccounts(db: Database): AccountView[] {
  const rows = db.prepare('SELECT * FROM vps_accounts ORDER BY account_id').all() as {
    account_id: string;
    provider_id: string;
    region: string;
    config: string;
    token_secret_id: string;
    created_at: string;
  }[];
  return rows.map((r) => ({
    accountId: r.account_id,
    providerId: r.provider_id,
    region: r.region,
    config: JSON.parse(r.config) as AccountView['config'],
    tokenSecretId: r.token_secret_id,
    createdAt: r.created_at,
  }));
}
