/** Numbered migrations of the `nodes` read model; index + 1 is the schema version. */
export const nodesMigrations = [
  `CREATE TABLE nodes (
     node_id TEXT PRIMARY KEY,
     site_id TEXT NOT NULL,
     state TEXT NOT NULL,
     maintenance INTEGER NOT NULL DEFAULT 0,
     bmc_address TEXT NOT NULL,
     bmc_credentials_ref TEXT NOT NULL,
     hardware_profile TEXT NOT NULL,
     macs TEXT NOT NULL,
     enrolled_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );
   CREATE INDEX nodes_by_site ON nodes (site_id, node_id);
   CREATE INDEX nodes_by_state ON nodes (state, node_id);`,
  `ALTER TABLE nodes ADD COLUMN maintenance_reason TEXT;`,
  `ALTER TABLE nodes ADD COLUMN current_operation TEXT;
   ALTER TABLE nodes ADD COLUMN current_workflow_id TEXT;
   ALTER TABLE nodes ADD COLUMN waiting_reason TEXT;
   ALTER TABLE nodes ADD COLUMN failure_reason TEXT;
   ALTER TABLE nodes ADD COLUMN failed_step TEXT;
   ALTER TABLE nodes ADD COLUMN failed_operation TEXT;
   ALTER TABLE nodes ADD COLUMN rescued_from TEXT;
   ALTER TABLE nodes ADD COLUMN inventory TEXT;`,
  `ALTER TABLE nodes ADD COLUMN maintenance_source TEXT;`,
  // Tenancy: who owns a node (and since which log position), and which tenant each operation's workflow ran for.
  `ALTER TABLE nodes ADD COLUMN owner_tenant_id TEXT;
   ALTER TABLE nodes ADD COLUMN owned_since_seq INTEGER;
   CREATE INDEX nodes_by_owner ON nodes (owner_tenant_id, node_id);
   CREATE TABLE workflow_tenants (workflow_id TEXT PRIMARY KEY, node_id TEXT NOT NULL, tenant_id TEXT NOT NULL);
   CREATE INDEX workflow_tenants_by_tenant ON workflow_tenants (tenant_id, workflow_id);`,
  // Pools: which pool a node serves and whether it runs an agent; the addresses its API answers on; the role of the
  // last agent of the node that registered (what `connected` is derived from).
  `ALTER TABLE nodes ADD COLUMN pool_id TEXT;
   ALTER TABLE nodes ADD COLUMN agent TEXT NOT NULL DEFAULT 'bcd';
   ALTER TABLE nodes ADD COLUMN addresses TEXT NOT NULL DEFAULT '[]';
   ALTER TABLE nodes ADD COLUMN agent_role TEXT;`,
  // The BMC options the node was enrolled with (auth, TLS, boot mode), as JSON: what every command to its BMC carries.
  `ALTER TABLE nodes ADD COLUMN bmc_options TEXT NOT NULL DEFAULT '{}';`,
  // The role the node is deployed as (`metal.deploy … role`).
  `ALTER TABLE nodes ADD COLUMN role TEXT;`,
  // In-band inspection: what the ramdisk saw from inside, and where it disagrees with the BMC's inventory.
  `ALTER TABLE nodes ADD COLUMN in_band_inventory TEXT;
   ALTER TABLE nodes ADD COLUMN inventory_findings TEXT;`,
  // Each tenant's own caps on concurrent deploys and wipes (`TenantCapsSet`): what the waiting reason compares with.
  `CREATE TABLE tenant_caps (tenant_id TEXT PRIMARY KEY, deploys INTEGER, wipes INTEGER);`,
  // The operator's labels (`NodeLabelsSet`), as JSON; the derived `bc.dev/` ones are computed when a node is read.
  `ALTER TABLE nodes ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';`,
];
