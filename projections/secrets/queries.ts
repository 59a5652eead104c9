import type { Database } from 'better-sqlite3';
import { secretRefOf, type SecretKind } from '../../schemas/secrets/sealed.ts';
import type { SecretView } from '../../schemas/secrets/views.ts';

interface SecretRow {
  secret_id: string;
  kind: SecretKind;
  version: number;
  key_id: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

// The sealed column is never selected: the metadata API has no path to the blob.
const columns = 'secret_id, kind, version, key_id, description, created_at, updated_at';

const toView = (r: SecretRow): SecretView => ({
  secretId: r.secret_id,
  ref: secretRefOf(r.secret_id),
  kind: r.kind,
  version: r.version,
  keyId: r.key_id,
  description: r.description,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function listSecrets(db: Database, filter: { kind?: SecretKind } = {}): SecretView[] {
  const rows = db
    .prepare(`SELECT ${columns} FROM secrets WHERE (@kind IS NULL OR kind = @kind) ORDER BY secret_id`)
    .all({ kind: filter.kind ?? null }) as SecretRow[];
  return rows.map(toView);
}

export function getSecret(db: Database, secretId: string): SecretView | undefined {
  const row = db.prepare(`SELECT ${columns} FROM secrets WHERE secret_id = ?`).get(secretId) as SecretRow | undefined;
  return row && toView(row);
}
