import type { Database } from 'better-sqlite3';
import type { Role } from '../../schemas/auth/roles.ts';
import type { TokenView } from '../../schemas/auth/views.ts';

interface TokenRow {
  token_id: string;
  role: Role;
  tenant_id: string | null;
  description: string | null;
  expires_at: string | null;
  secret_hash: string;
  revoked: number;
  created_at: string;
  created_by: string;
}

/** What authentication needs of a token, hash included; never leaves the API process. */
export interface TokenCredential {
  readonly tokenId: string;
  readonly role: Role;
  readonly tenantId: string | null;
  readonly expiresAt: string | null;
  readonly secretHash: string;
  readonly revoked: boolean;
}

const toView = (r: TokenRow): TokenView => ({
  tokenId: r.token_id,
  role: r.role,
  tenantId: r.tenant_id,
  description: r.description,
  expiresAt: r.expires_at,
  revoked: r.revoked === 1,
  createdAt: r.created_at,
  createdBy: r.created_by,
});

export function tokenCredential(db: Database, tokenId: string): TokenCredential | undefined {
  const r = db.prepare('SELECT * FROM api_tokens WHERE token_id = ?').get(tokenId) as TokenRow | undefined;
  return r && { tokenId: r.token_id, role: r.role, tenantId: r.tenant_id, expiresAt: r.expires_at, secretHash: r.secret_hash, revoked: r.revoked === 1 };
}

export function listTokens(db: Database): TokenView[] {
  return (db.prepare('SELECT * FROM api_tokens ORDER BY token_id').all() as TokenRow[]).map(toView);
}

export function getToken(db: Database, tokenId: string): TokenView | undefined {
  const r = db.prepare('SELECT * FROM api_tokens WHERE token_id = ?').get(tokenId) as TokenRow | undefined;
  return r && toView(r);
}
