/** Numbered migrations of the `tokens` read model; index + 1 is the schema version. */
export const tokensMigrations = [
  `CREATE TABLE api_tokens (
     token_id TEXT PRIMARY KEY,
     role TEXT NOT NULL,
     tenant_id TEXT,
     description TEXT,
     expires_at TEXT,
     secret_hash TEXT NOT NULL,
     revoked INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     created_by TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );`,
];
