import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { secretsMigrations } from './schema.ts';

/**
 * The `secrets` read model: each live secret's metadata and its sealed value (ciphertext at rest, like the log). A
 * deleted secret's row goes, blob and all.
 */
export const secretsProjection = defineProjection({
  name: 'secrets',
  migrations: secretsMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'SecretStored': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO secrets (secret_id, kind, version, key_id, sealed, description, created_at, updated_at, last_seq)
           VALUES (@secretId, @kind, @version, @keyId, @sealed, @description, @time, @time, @seq)
           ON CONFLICT (secret_id) DO UPDATE SET kind = @kind, version = @version, key_id = @keyId, sealed = @sealed,
             description = @description, updated_at = @time, last_seq = @seq`,
        ).run({
          secretId: d.secretId,
          kind: d.kind,
          version: d.version,
          keyId: d.keyId,
          sealed: JSON.stringify(d.sealed),
          description: d.description,
          time: metadata.time,
          seq: position.seq,
        });
        return;
      }
      case 'SecretDeleted':
        statement(db, 'DELETE FROM secrets WHERE secret_id = ?').run(event.data.secretId);
        return;
      default:
        return;
    }
  },
});
