import { isDeepStrictEqual } from 'node:util';
import { PLUGIN_REGISTRY_ID, pluginRegistryRef, type PluginRegistryState } from '../../../schemas/plugins/registryState.ts';
import { CreateProviderAccount } from '../../../schemas/vps/accountCommands.ts';
import type { AccountEvent } from '../../../schemas/vps/events.ts';
import { accountShapeIssues, type ProviderManifest } from '../../../schemas/vps/providerAccountShape.ts';
import { secretRef } from '../../../schemas/secrets/secretState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { accountAggregate } from './account.ts';

/** The provider as the first plugin that registered it declares it (the one the reconciler uses), if any plugin does. */
function manifestOf(registry: PluginRegistryState, providerId: string): ProviderManifest | undefined {
  for (const plugin of registry.plugins.values()) {
    const manifest = plugin.providers.find((p) => p.id === providerId);
    if (manifest) return manifest;
  }
  return undefined;
}

/**
 * `vps.createProviderAccount`: the token secret must already be stored (`PUT /v1/secrets/<tokenSecretId>`), so an
 * account never exists without its credentials and the token never travels through this command. Once a plugin
 * registered the provider with an account shape, `{ region, ...config }` must fit it (`PROVIDER_CREDENTIALS_INVALID`,
 * listing the paths); a provider no plugin registered yet is accepted as before, and the reconciler reports the
 * account until one does.
 */
export const createProviderAccount = defineCommand({
  name: 'vps.createProviderAccount',
  exposure: ['operator'],
  schema: CreateProviderAccount,
  aggregate: accountAggregate,
  aggregateId: (command) => command.accountId,
  dependencies: async (command, load) => ({
    secret: await load(secretRef, command.tokenSecretId),
    provider: manifestOf(await load(pluginRegistryRef, PLUGIN_REGISTRY_ID), command.providerId),
  }),
  decide(command, state, { dependencies }): AccountEvent[] {
    const { accountId, providerId, region, config, tokenSecretId } = command;
    const data = { accountId, providerId, region, config, tokenSecretId };
    if (state.exists) {
      const { exists: _exists, ...created } = state;
      if (isDeepStrictEqual(created, data)) return [];
      throw new DomainError('ALREADY_EXISTS', `provider account ${accountId} already exists`);
    }
    const shape = dependencies.provider?.account;
    if (shape !== undefined) {
      const issues = accountShapeIssues(shape, { region, ...config });
      if (issues.length > 0) {
        const listed = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
        throw new DomainError('PROVIDER_CREDENTIALS_INVALID', `account ${accountId} does not fit provider ${providerId}: ${listed}`, { issues });
      }
    }
    if (!dependencies.secret.exists)
      throw new DomainError('PRECONDITION_FAILED', `secret ${tokenSecretId} does not exist; store the token with PUT /v1/secrets/${tokenSecretId} first`);
    return [{ type: 'ProviderAccountCreated', data }];
  },
});
