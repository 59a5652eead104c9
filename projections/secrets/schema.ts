/** Numbered migrations of the `secrets` read model; index + 1 is the schema version. */
export const secretsMigrations = [
  `CREATE TABLE secrets (
     secret_id TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     version INTEGER NOT NULL,
     key_id TEXT NOT NULL,
     sealed TEXT NOT NULL,
     description TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     last_seq INTEGER NOT NULL
   );`,
];
