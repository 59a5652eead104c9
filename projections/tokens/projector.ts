import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { tokensMigrations } from './schema.ts';

/** The `tokens` read model: what the API authenticates against (by token id), including revoked tokens. */
export const tokensProjection = defineProjection({
  name: 'tokens',
  migrations: tokensMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'ApiTokenCreated': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO api_tokens (token_id, role, tenant_id, description, expires_at, secret_hash, revoked, created_at, created_by, last_seq)
           VALUES (@tokenId, @role, @tenantId, @description, @expiresAt, @secretHash, 0, @time, @actor, @seq)`,
        ).run({ ...d, time: metadata.time, actor: metadata.actor, seq: position.seq });
        return;
      }
      case 'ApiTokenRevoked':
        statement(db, 'UPDATE api_tokens SET revoked = 1, last_seq = ? WHERE token_id = ?').run(position.seq, event.data.tokenId);
        return;
      default:
        return;
    }
  },
});
