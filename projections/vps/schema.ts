/**
 * Numbered migrations of the `vps` read model; index + 1 is the schema version. Instances are keyed by tenant and id:
 * the tenant's `InstanceRequested` and the instance subject's events both carry the tenant, so two tenants that raced
 * for one id never share a row.
 */
export const vpsMigrations = [
  `CREATE TABLE vps_tenants (
     tenant_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     quota_instances INTEGER NOT NULL DEFAULT 0,
     quota_vcpus INTEGER NOT NULL DEFAULT 0,
     quota_memory_mib INTEGER NOT NULL DEFAULT 0,
     quota_disk_gib INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );
   CREATE TABLE vps_instances (
     tenant_id TEXT NOT NULL,
     instance_id TEXT NOT NULL,
     pool_id TEXT NOT NULL,
     flavor_id TEXT NOT NULL,
     image TEXT NOT NULL,
     ssh_keys TEXT NOT NULL,
     has_user_data INTEGER NOT NULL,
     instances INTEGER NOT NULL,
     vcpus INTEGER NOT NULL,
     memory_mib INTEGER NOT NULL,
     disk_gib INTEGER NOT NULL,
     quota_status TEXT NOT NULL,
     desired TEXT NOT NULL DEFAULT 'running',
     observed TEXT,
     provider_instance_id TEXT,
     addresses TEXT NOT NULL DEFAULT '[]',
     message TEXT,
     requested_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL,
     PRIMARY KEY (tenant_id, instance_id)
   );
   CREATE INDEX vps_instances_by_id ON vps_instances (instance_id);
   CREATE TABLE vps_pools (
     pool_id TEXT PRIMARY KEY,
     class TEXT NOT NULL,
     agent TEXT NOT NULL,
     account_id TEXT,
     site_id TEXT,
     policy TEXT NOT NULL,
     created_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );
   CREATE TABLE vps_pool_offers (
     pool_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     PRIMARY KEY (pool_id, tenant_id)
   );
   CREATE TABLE vps_flavors (
     flavor_id TEXT PRIMARY KEY,
     vcpus INTEGER NOT NULL,
     memory_mib INTEGER NOT NULL,
     disk_gib INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );
   CREATE TABLE vps_flavor_offers (
     flavor_id TEXT NOT NULL,
     pool_id TEXT NOT NULL,
     offer_id TEXT NOT NULL,
     PRIMARY KEY (flavor_id, pool_id)
   );
   CREATE TABLE vps_accounts (
     account_id TEXT PRIMARY KEY,
     provider_id TEXT NOT NULL,
     region TEXT NOT NULL,
     config TEXT NOT NULL,
     token_secret_id TEXT NOT NULL,
     created_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );`,
  // 2: holds, one row per hold; whether one is active or expired is decided at query time from `expires_at`.
  `CREATE TABLE vps_holds (
     site_id TEXT NOT NULL,
     hold_id TEXT NOT NULL,
     tenant_id TEXT,
     pool_id TEXT,
     nodes TEXT NOT NULL,
     whole_nodes INTEGER NOT NULL,
     selector TEXT NOT NULL,
     placed_at TEXT NOT NULL,
     expires_at TEXT NOT NULL,
     released_at TEXT,
     last_seq INTEGER NOT NULL,
     PRIMARY KEY (site_id, hold_id)
   );
   CREATE INDEX vps_holds_by_id ON vps_holds (hold_id);
   CREATE INDEX vps_holds_by_tenant ON vps_holds (tenant_id);`,
  // 3: where a metal-pool instance runs (its InstancePlaced, cleared on InstanceUnplaced) and a metal pool's runtime.
  // Instances placed and pools created before it show neither until the read model is rebuilt.
  `ALTER TABLE vps_instances ADD COLUMN placement TEXT;
   ALTER TABLE vps_pools ADD COLUMN runtime TEXT;`,
  // 4: a metal pool's warm setting (PoolWarmSet) and its slots on the site's book, until taken or reaped.
  `ALTER TABLE vps_pools ADD COLUMN warm TEXT;
   CREATE TABLE vps_warm_slots (
     slot_id TEXT PRIMARY KEY,
     site_id TEXT NOT NULL,
     pool_id TEXT NOT NULL,
     flavor_id TEXT NOT NULL,
     image TEXT NOT NULL,
     node_id TEXT NOT NULL,
     placed_at TEXT NOT NULL,
     ready_at TEXT,
     last_seq INTEGER NOT NULL
   );
   CREATE INDEX vps_warm_slots_by_pool ON vps_warm_slots (pool_id);`,
];
