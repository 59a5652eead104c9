import { isDeepStrictEqual } from 'node:util';
import { CreateProviderAccount } from '../../../schemas/vps/accountCommands.ts';
import type { AccountEvent } from '../../../schemas/vps/events.ts';
import { secretRef } from '../../../schemas/secrets/secretState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { accountAggregate } from './account.ts';

/**
 * `vps.createProviderAccount`: the token secret must already be stored (`PUT /v1/secrets/<tokenSecretId>`), so an
 * account never exists without its credentials and the token never travels through this command.
 */
export const createProviderAccount = defineCommand({
  name: 'vps.createProviderAccount',
  exposure: ['operator'],
  schema: CreateProviderAccount,
  aggregate: accountAggregate,
  aggregateId: (command) => command.accountId,
  dependencies: async (command, load) => ({ secret: await load(secretRef, command.tokenSecretId) }),
  decide(command, state, { dependencies }): AccountEvent[] {
    const { accountId, providerId, region, config, tokenSecretId } = command;
    const data = { accountId, providerId, region, config, tokenSecretId };
    if (state.exists) {
      const { exists: _exists, ...created } = state;
      if (isDeepStrictEqual(created, data)) return [];
      throw new DomainError('ALREADY_EXISTS', `provider account ${accountId} already exists`);
    }
    if (!dependencies.secret.exists)
      throw new DomainError('PRECONDITION_FAILED', `secret ${tokenSecretId} does not exist; store the token with PUT /v1/secrets/${tokenSecretId} first`);
    return [{ type: 'ProviderAccountCreated', data }];
  },
});
