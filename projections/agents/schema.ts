/** Numbered migrations of the `agents` read model; index + 1 is the schema version. */
export const agentsMigrations = [
  `CREATE TABLE agents (
     agent_id TEXT PRIMARY KEY,
     role TEXT NOT NULL,
     site_id TEXT NOT NULL,
     node_id TEXT,
     key_id TEXT NOT NULL,
     key_since TEXT NOT NULL,
     registered_at TEXT NOT NULL,
     rotations INTEGER NOT NULL DEFAULT 0,
     rotation_requested_at TEXT,
     last_seq INTEGER NOT NULL
   );
   CREATE INDEX agents_by_key_since ON agents (key_since);`,
];
