import { sealingAad, type SealedValue } from '../../../schemas/secrets/sealed.ts';
import { ProviderError, connectProvider, type ProviderClient, type ProviderDefinition } from '../../../plugins/sdk/provider.ts';
import { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { PluginDefinition } from '../../../plugins/sdk/definePlugin.ts';
import type { MasterKey } from '../../secrets/masterKey.ts';
import { open } from '../../secrets/sealing.ts';
import { secretAggregate } from '../../secrets/secret/secret.ts';
import type { ProviderAccount } from './model.ts';

const isProvider = (value: unknown): value is ProviderDefinition<string, unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { create?: unknown }).create === 'function' && 'configSchema' in value;

/** Every provider the plugins bring, by provider id; the first plugin naming an id wins. */
export function providersOf(plugins: readonly PluginDefinition[]): Map<string, ProviderDefinition<string, unknown>> {
  const providers = new Map<string, ProviderDefinition<string, unknown>>();
  for (const plugin of plugins) for (const p of plugin.providers) if (isProvider(p) && !providers.has(p.id)) providers.set(p.id, p);
  return providers;
}

/**
 * Builds one client per provider account and token version. The token is opened from its sealed secret with the
 * master key only here and handed straight to `connectProvider`; it is never kept elsewhere or logged. A secret put
 * again (a rotated token) has a new version, so the next pass builds a new client with it.
 */
export class ProviderClients {
  readonly #repository: AggregateRepository;
  readonly #clients = new Map<string, ProviderClient>();

  constructor(
    store: EventStore,
    private readonly masterKey: MasterKey,
    private readonly providers: ReadonlyMap<string, ProviderDefinition<string, unknown>>,
    private readonly options: { fetch: typeof fetch; signal: AbortSignal },
  ) {
    this.#repository = new AggregateRepository(store, 10_000);
  }

  /** The account's client; a missing provider plugin, token or readable token is a `configuration` ProviderError. */
  async clientFor(accountId: string, account: ProviderAccount): Promise<ProviderClient> {
    const provider = this.providers.get(account.providerId);
    if (!provider) throw new ProviderError('configuration', `no loaded plugin provides "${account.providerId}" (BC_PLUGINS)`);
    const secret = (await this.#repository.load(secretAggregate, account.tokenSecretId)).state;
    if (!secret.exists) throw new ProviderError('configuration', `the token secret ${account.tokenSecretId} of account ${accountId} does not exist`);
    const cacheKey = `${accountId}/v${secret.version}`;
    const cached = this.#clients.get(cacheKey);
    if (cached) return cached;
    const token = this.openToken(accountId, account.tokenSecretId, secret.sealed, secret.version);
    // The region is part of the account, not its config; providers that need it read it from config too.
    const client = connectProvider(provider, {
      config: { region: account.region, ...account.config },
      token,
      fetch: this.options.fetch,
      signal: this.options.signal,
    });
    this.#clients.set(cacheKey, client);
    return client;
  }

  /** The edge stores a secret's value as JSON: a provider token is a JSON string, or an object with a `token` string. */
  private openToken(accountId: string, secretId: string, sealed: SealedValue, version: number): string {
    let text: string;
    try {
      text = open(sealed, this.masterKey, sealingAad(secretId, version)).toString('utf8');
    } catch (cause) {
      throw new ProviderError('configuration', `the token secret ${secretId} of account ${accountId} cannot be opened with this master key`, { cause });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // No cause: JSON.parse's message quotes the text, which is the token.
      throw new ProviderError('configuration', `the token secret ${secretId} of account ${accountId} is not JSON`);
    }
    if (typeof value === 'string') return value;
    const token = typeof value === 'object' && value !== null ? (value as { token?: unknown }).token : undefined;
    if (typeof token === 'string') return token;
    throw new ProviderError('configuration', `the token secret ${secretId} of account ${accountId} holds neither a string nor { "token": string }`);
  }
}
