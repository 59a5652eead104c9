/** Numbered migrations of the `workflows` read model; index + 1 is the schema version. */
export const workflowsMigrations = [
  `CREATE TABLE workflows (
     workflow_id TEXT PRIMARY KEY,
     node_id TEXT NOT NULL,
     site_id TEXT NOT NULL,
     operation TEXT NOT NULL,
     profile_id TEXT NOT NULL,
     profile_version INTEGER NOT NULL,
     state TEXT NOT NULL,
     failed_step TEXT,
     error TEXT,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     last_seq INTEGER NOT NULL
   );
   CREATE INDEX workflows_by_node ON workflows (node_id, started_at);
   CREATE TABLE workflow_steps (
     workflow_id TEXT NOT NULL REFERENCES workflows (workflow_id),
     step_index INTEGER NOT NULL,
     step_id TEXT NOT NULL,
     runs_on TEXT NOT NULL,
     destructive INTEGER NOT NULL,
     params TEXT NOT NULL,
     state TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     output TEXT,
     error_code TEXT,
     error TEXT,
     rejected_results INTEGER NOT NULL DEFAULT 0,
     started_at TEXT,
     ended_at TEXT,
     PRIMARY KEY (workflow_id, step_index)
   );`,
  `CREATE TABLE approvals (
     workflow_id TEXT PRIMARY KEY,
     digest TEXT NOT NULL,
     items TEXT NOT NULL,
     threshold INTEGER NOT NULL,
     approver_ids TEXT NOT NULL,
     granted_by TEXT NOT NULL DEFAULT '[]',
     rejected_by TEXT,
     rejection_reason TEXT,
     requested_at TEXT NOT NULL,
     expires_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );`,
  // The fleet's workflows, newest first (`GET /v1/workflows`).
  `CREATE INDEX workflows_by_start ON workflows (started_at, workflow_id);`,
  // Each step's own timeout as resolved at start (the autonomy step-overdue sensor); null in rows projected before it.
  `ALTER TABLE workflow_steps ADD COLUMN timeout_ms INTEGER;`,
];
