/** Numbered migrations of the `sites` read model; index + 1 is the schema version. */
export const sitesMigrations = [
  `CREATE TABLE sites (
     site_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     provisioning_cidrs TEXT NOT NULL,
     created_at TEXT NOT NULL,
     node_count INTEGER NOT NULL DEFAULT 0
   );`,
];
