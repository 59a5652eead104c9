import { RevokeToken } from '../../../schemas/auth/commands.ts';
import type { AuthEvent } from '../../../schemas/auth/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { tokenAggregate } from './token.ts';

/** `auth.revokeToken`: refused from the next request on; revoking a revoked token is a no-op. */
export const revokeToken = defineCommand({
  name: 'auth.revokeToken',
  exposure: ['edge'],
  schema: RevokeToken,
  aggregate: tokenAggregate,
  aggregateId: (command) => command.tokenId,
  decide(command, state): AuthEvent[] {
    if (!state.exists) throw new DomainError('NOT_FOUND', `token ${command.tokenId} not found`);
    if (state.revoked) return [];
    return [{ type: 'ApiTokenRevoked', data: { tokenId: command.tokenId } }];
  },
});
