import { CreateToken } from '../../../schemas/auth/commands.ts';
import type { AuthEvent } from '../../../schemas/auth/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { tokenAggregate } from './token.ts';

/**
 * `auth.createToken`. A token id names one token for good: creating it again with the same hash is a no-op (a retry),
 * anything else (another secret, or after a revocation) is ALREADY_EXISTS, so a revoked token never comes back.
 */
export const createToken = defineCommand({
  name: 'auth.createToken',
  exposure: ['edge'],
  schema: CreateToken,
  aggregate: tokenAggregate,
  aggregateId: (command) => command.tokenId,
  decide(command, state): AuthEvent[] {
    if (state.exists) {
      if (!state.revoked && state.secretHash === command.secretHash && state.role === command.role) return [];
      throw new DomainError('ALREADY_EXISTS', `token ${command.tokenId} already exists`);
    }
    const { tokenId, role, secretHash } = command;
    return [
      {
        type: 'ApiTokenCreated',
        data: { tokenId, role, secretHash, tenantId: command.tenantId ?? null, description: command.description ?? null, expiresAt: command.expiresAt ?? null },
      },
    ];
  },
});
