import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/**
 * What a bearer token may do. `admin`: everything, and the only role that manages tokens. `operator`: every command
 * and read but tokens. `approver`: reads, plus approving and rejecting (the quorum routes). `viewer`: reads only.
 * `tenant`: its own nodes (deploy, undeploy, rescue, unrescue) and what belongs to them; shared sites are readable.
 */
export const Role = z.enum(['admin', 'operator', 'approver', 'viewer', 'tenant']);
export type Role = z.infer<typeof Role>;

/** A tenant id: one subject-safe token, like every resource id. */
export const TenantId = ResourceId;
export type TenantId = z.infer<typeof TenantId>;

/** Who is calling, once the bearer token checked out; `tenantId` is set exactly for the `tenant` role. */
export interface Principal {
  readonly tokenId: string;
  readonly role: Role;
  readonly tenantId: string | null;
  /** What events record as their `actor`. */
  readonly actor: string;
}

/** `token:<tokenId>`: the actor of every event a token's command appended. */
export const actorOfToken = (tokenId: string) => `token:${tokenId}`;

/** `tenant:<id>`: how a tenant principal is written for humans (`role` in the CLI, log lines). */
export const roleLabel = (role: Role, tenantId: string | null) => (role === 'tenant' ? `tenant:${tenantId}` : role);
