/** Numbered migrations of the `modules` read model; index + 1 is the schema version. */
export const modulesMigrations = [
  `CREATE TABLE modules (
     name TEXT PRIMARY KEY,
     version_count INTEGER NOT NULL,
     last_version TEXT NOT NULL,
     last_published_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );
   CREATE TABLE module_versions (
     module TEXT NOT NULL,
     version TEXT NOT NULL,
     bundle_sha256 TEXT NOT NULL,
     manifest_sha256 TEXT NOT NULL,
     publisher_id TEXT NOT NULL,
     manifest TEXT NOT NULL,
     published_at TEXT NOT NULL,
     published_by TEXT NOT NULL,
     seq INTEGER NOT NULL,
     PRIMARY KEY (module, version)
   );
   CREATE TABLE module_publishers (
     publisher_id TEXT PRIMARY KEY,
     public_key TEXT NOT NULL,
     revoked INTEGER NOT NULL DEFAULT 0,
     retired_keys TEXT NOT NULL DEFAULT '[]',
     updated_at TEXT NOT NULL
   );`,
  // 2: templates and each host's assignment (fleet.defineTemplate, fleet.assignTemplate / pinModule / unpinModule)
  `CREATE TABLE templates (
     template_id TEXT PRIMARY KEY,
     requires TEXT NOT NULL,
     includes TEXT NOT NULL,
     defined_at TEXT NOT NULL,
     defined_by TEXT NOT NULL
   );
   CREATE TABLE host_assignments (
     node_id TEXT PRIMARY KEY,
     template TEXT,
     pins TEXT NOT NULL,
     plan TEXT NOT NULL,
     plan_digest TEXT NOT NULL,
     assigned_at TEXT NOT NULL,
     assigned_by TEXT NOT NULL
   );
   CREATE INDEX host_assignments_template ON host_assignments (template);`,
  // 3: rollouts (fleet.startRollout and the rollout's commands): each rollout, its waves and each host's outcome
  `CREATE TABLE rollouts (
     rollout_id TEXT PRIMARY KEY,
     module TEXT NOT NULL,
     from_version TEXT NOT NULL,
     to_version TEXT NOT NULL,
     template TEXT,
     status TEXT NOT NULL,
     plan_digest TEXT NOT NULL,
     options TEXT NOT NULL,
     wave_count INTEGER NOT NULL,
     started_waves INTEGER NOT NULL DEFAULT 0,
     host_count INTEGER NOT NULL,
     halt TEXT,
     rollback_targets TEXT,
     started_at TEXT NOT NULL,
     started_by TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     seq INTEGER NOT NULL
   );
   CREATE INDEX rollouts_module ON rollouts (module);
   CREATE TABLE rollout_waves (
     rollout_id TEXT NOT NULL,
     wave INTEGER NOT NULL,
     deadline TEXT,
     PRIMARY KEY (rollout_id, wave)
   );
   CREATE TABLE rollout_hosts (
     rollout_id TEXT NOT NULL,
     host TEXT NOT NULL,
     wave INTEGER NOT NULL,
     position INTEGER NOT NULL,
     outcome TEXT,
     restored TEXT,
     PRIMARY KEY (rollout_id, host)
   );`,
  // 4: rollouts awaiting approval (fleet.approveRollout): the approvals the start needed and who approved so far
  `ALTER TABLE rollouts ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE rollouts ADD COLUMN approvals TEXT NOT NULL DEFAULT '[]';`,
  // 5: the publisher key each version's manifest was signed with (what the console shows beside the publisher)
  `ALTER TABLE module_versions ADD COLUMN signing_key TEXT;`,
  // 6: a rollout's approval window (fleet.expireRolloutApproval) and the approver who rejected it (fleet.rejectRollout)
  `ALTER TABLE rollouts ADD COLUMN approval_expires_at TEXT;
   ALTER TABLE rollouts ADD COLUMN rejected_by TEXT;`,
];
