import { ProviderError, connectProvider, type ProviderClient, type ProviderDefinition } from '../../../plugins/sdk/provider.ts';
import type { PluginDefinition } from '../../../plugins/sdk/definePlugin.ts';
import type { ProviderAccount } from './model.ts';

/**
 * Provider account tokens, as the composition root reads them: each is a sealed secret, opened with the master key
 * only when a client is built. The reconciler never sees the key or the sealed value.
 */
export interface ProviderTokens {
  /** The secret's current version, or undefined when it does not exist. */
  versionOf(secretId: string): Promise<number | undefined>;
  /** The plaintext of that version (what the edge stored: JSON); throws when it cannot be opened. */
  open(secretId: string, version: number): Promise<string>;
}

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
  readonly #clients = new Map<string, ProviderClient>();

  constructor(
    private readonly tokens: ProviderTokens,
    private readonly providers: ReadonlyMap<string, ProviderDefinition<string, unknown>>,
    private readonly options: { fetch: typeof fetch; signal: AbortSignal },
  ) {}

  /** The account's client; a missing provider plugin, token or readable token is a `configuration` ProviderError. */
  async clientFor(accountId: string, account: ProviderAccount): Promise<ProviderClient> {
    const provider = this.providers.get(account.providerId);
    if (!provider) throw new ProviderError('configuration', `no loaded plugin provides "${account.providerId}" (BC_PLUGINS)`);
    const version = await this.tokens.versionOf(account.tokenSecretId);
    if (version === undefined) throw new ProviderError('configuration', `the token secret ${account.tokenSecretId} of account ${accountId} does not exist`);
    const cacheKey = `${accountId}/v${version}`;
    const cached = this.#clients.get(cacheKey);
    if (cached) return cached;
    const token = await this.openToken(accountId, account.tokenSecretId, version);
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
  private async openToken(accountId: string, secretId: string, version: number): Promise<string> {
    let text: string;
    try {
      text = await this.tokens.open(secretId, version);
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
