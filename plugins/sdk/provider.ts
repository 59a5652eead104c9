/**
 * The VPS provider contract: what a cloud plugin implements so the platform can create, power and delete instances
 * on that cloud. A provider is a `defineProvider({...})` value; the platform calls `create(ctx)` with the account's
 * parsed config and API token and drives the returned `ProviderClient`. Prove an implementation with
 * `runConformance(providerConformanceCases(), subject)`.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { ProviderInstance, ProviderInstanceSpec, ProviderOffer } from '../../schemas/vps/provider.ts';
import { runCommand, type RunCommand } from './providerCommands.ts';

export type { ProviderInstance, ProviderInstanceSpec, ProviderOffer, ProviderInstanceState } from '../../schemas/vps/provider.ts';

/** What the platform hands a provider's `create`: one cloud account, already resolved. */
export interface ProviderContext<C> {
  /** The account's config, already validated by the provider's `configSchema`. */
  readonly config: C;
  /**
   * The account's API token in plaintext, opened by the platform from a sealed secret just for this client. Never log
   * it, never put it in an error message or a URL: send it only as the cloud's auth header.
   */
  readonly token: string;
  /** The only way a provider may reach the network; injected so tests can record, replay or fault it. */
  readonly fetch: typeof fetch;
  /**
   * The only way a provider may run a program (a cloud driven by a local tool, as libvirt by `virsh`); injected like
   * `fetch`. The platform's runner spawns it without a shell (`runCommand`).
   */
  readonly run: RunCommand;
  /** Aborted when the platform gives up on the work; pass it to `fetch`, `run` and `withTransientRetry`. */
  readonly signal?: AbortSignal;
}

/**
 * One cloud account as the platform drives it. Every method may throw a `ProviderError`; anything else thrown counts
 * as a bug in the provider. Methods retry transient failures themselves (see `withTransientRetry`), so a `transient`
 * error that escapes means the cloud stayed unavailable through the retries.
 */
export interface ProviderClient {
  /** The sizes this account may create, in the cloud's order. */
  listOffers(): Promise<ProviderOffer[]>;
  /**
   * Creates an instance, idempotent by `spec.clientToken`: calling again with the same token (after a timeout, a crash,
   * a retry) returns the instance the first call created, never a second one. Resolves as soon as the cloud accepted
   * it, usually in `provisioning`.
   */
  createInstance(spec: ProviderInstanceSpec): Promise<ProviderInstance>;
  /** The instance's current state. Throws `ProviderError` kind `not-found` when the cloud does not know the id. */
  getInstance(providerInstanceId: string): Promise<ProviderInstance>;
  /** The live instance created with `clientToken`, or null: how the platform finds a create whose answer was lost. */
  findByClientToken(clientToken: string): Promise<ProviderInstance | null>;
  /** Asks the cloud to power the instance on; resolves once accepted (poll `getInstance` for `running`). */
  startInstance(providerInstanceId: string): Promise<void>;
  /** Asks the cloud to power the instance off; resolves once accepted (poll `getInstance` for `stopped`). */
  stopInstance(providerInstanceId: string): Promise<void>;
  /** Asks the cloud to delete the instance; idempotent: an instance already deleting or gone is success. */
  deleteInstance(providerInstanceId: string): Promise<void>;
  /** Every instance of the account, following the cloud's pagination to the last page. */
  listInstances(): Promise<ProviderInstance[]>;
}

/** A VPS provider plugin: a literal `id`, the schema of an account's config, and the client factory. */
export interface ProviderDefinition<Id extends string = string, C = unknown> {
  readonly id: Id;
  /** Validates an account's config (endpoint, region, ...); never holds the token, which is a sealed secret. */
  readonly configSchema: z.ZodType<C>;
  /** Builds a client for one account. Must not do I/O: the first call happens when the platform calls a method. */
  create(ctx: ProviderContext<C>): ProviderClient;
}

/** Declares a provider. Returns a frozen plain object whose `id` keeps its literal type, so registries type-check. */
export function defineProvider<const Id extends string, C>(definition: ProviderDefinition<Id, C>): ProviderDefinition<Id, C> {
  return Object.freeze({ ...definition });
}

/**
 * Validates `config` with the provider's schema and creates a client, as the platform does. An invalid config is a
 * `ProviderError` kind `configuration` that names the failing paths (never values: a config may sit next to secrets).
 */
export function connectProvider<C>(
  provider: ProviderDefinition<string, C>,
  account: { config: unknown; token: string; fetch: typeof fetch; run?: RunCommand; signal?: AbortSignal },
): ProviderClient {
  const parsed = provider.configSchema.safeParse(account.config);
  if (!parsed.success) {
    const paths = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    throw new ProviderError('configuration', `${provider.id}: invalid account config at ${paths}`, { cause: parsed.error });
  }
  const run = account.run ?? runCommand;
  return provider.create({ config: parsed.data, token: account.token, fetch: account.fetch, run, signal: account.signal });
}

/**
 * The idempotency key for creating the platform instance `instanceId`: `bc-` + the first 32 hex digits of its SHA-256.
 * Deterministic, so a retried or crashed create sends the same token and the cloud answers with the same instance.
 */
export function clientTokenOf(instanceId: string): string {
  return `bc-${createHash('sha256').update(instanceId).digest('hex').slice(0, 32)}`;
}

/** How a provider call failed, which decides what the platform does next. */
export const ProviderErrorKind = {
  /** Bad token, missing permission, invalid account config: an operator must act; never retried. */
  configuration: 'configuration',
  /** Network failure, timeout, rate limit, 5xx: retried with backoff. */
  transient: 'transient',
  /** The cloud does not know the instance. */
  notFound: 'not-found',
  /** The cloud refused the request as it stands (bad offer, invalid state): retrying the same request will not help. */
  rejected: 'rejected',
} as const;
export type ProviderErrorKind = (typeof ProviderErrorKind)[keyof typeof ProviderErrorKind];

const codeOfKind = {
  configuration: 'PROVIDER_CONFIGURATION',
  transient: 'PROVIDER_UNAVAILABLE',
  'not-found': 'PROVIDER_NOT_FOUND',
  rejected: 'PROVIDER_REJECTED',
} as const satisfies Record<ProviderErrorKind, string>;

/** The stable code of a `ProviderError`, one per kind. Match on this (or `kind`), never on the message. */
export type ProviderErrorCode = (typeof codeOfKind)[ProviderErrorKind];

/** A failed provider call. The message is safe to show and log: it never contains the account token. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  readonly code: ProviderErrorCode;
  /** When the cloud said how long to wait (`Retry-After`), in ms; `withTransientRetry` waits at least this long. */
  readonly retryAfterMs: number | undefined;
  /** The HTTP status that caused it, when there was one. */
  readonly status: number | undefined;
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    options: { cause?: unknown; retryAfterMs?: number; status?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = codeOfKind[kind];
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }
}

/**
 * Maps a non-2xx HTTP answer to a `ProviderError`: 401/403 → `configuration`, 404 → `not-found`, 408/425/429/5xx →
 * `transient` (with `Retry-After` in seconds or as an HTTP date), any other status → `rejected`. The message quotes at
 * most 200 characters of the body, which a cloud writes for humans; clouds do not echo the bearer token.
 */
export function classifyHttpFailure(status: number, bodyText: string, retryAfterHeader?: string | null): ProviderError {
  const detail = bodyText.replace(/\s+/g, ' ').trim().slice(0, 200);
  const message = `HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (status === 401 || status === 403) return new ProviderError('configuration', message, { status });
  if (status === 404) return new ProviderError('not-found', message, { status });
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    return new ProviderError('transient', message, { status, retryAfterMs: parseRetryAfter(retryAfterHeader) });
  }
  return new ProviderError('rejected', message, { status });
}

/** A `fetch` that threw (DNS, refused connection, reset, timeout): the cloud may not have seen it, so transient. */
export function classifyFetchFailure(error: unknown): ProviderError {
  const reason = error instanceof Error ? error.message : 'unknown error';
  return new ProviderError('transient', `request did not complete: ${reason}`, { cause: error });
}

function parseRetryAfter(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Options of `withTransientRetry`. */
export interface TransientRetryOptions {
  /** Total tries including the first. Default 4. */
  attempts?: number;
  /** Wait before the second try; doubles each time, capped at 10 s. Default 200 ms. */
  backoffMs?: number;
  /** Stops retrying (and waiting) once aborted; the abort reason is thrown. */
  signal?: AbortSignal;
}

/**
 * Runs `fn`, retrying only `ProviderError`s of kind `transient`: waits `backoffMs * 2^n` (capped at 10 s) or the
 * error's `retryAfterMs` if longer, up to `attempts` tries, then throws the last error. Anything else is thrown at
 * once. Wrap only calls that are safe to repeat (reads, deletes, creates with a client token).
 */
export async function withTransientRetry<T>(fn: () => Promise<T>, options: TransientRetryOptions = {}): Promise<T> {
  const { attempts = 4, backoffMs = 200, signal } = options;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof ProviderError) || error.kind !== 'transient' || attempt >= attempts) throw error;
      const backoff = Math.min(backoffMs * 2 ** (attempt - 1), 10_000);
      await sleep(Math.max(backoff, error.retryAfterMs ?? 0), signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The signal's reason as the Error `AbortSignal.abort()` makes, or one naming the reason it was given. */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}
