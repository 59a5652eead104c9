/**
 * One call to the Hetzner Cloud API (https://docs.hetzner.cloud/reference/cloud) and what its answers mean: the wire
 * shapes keep Hetzner's snake_case, and Hetzner's error codes (`{ "error": { "code", "message" } }`) become the SDK's
 * error kinds here and nowhere else.
 */
import { z } from 'zod';
import { ProviderError, callProviderApi, classifyHttpFailure, readAnswer } from 'better-compute/sdk';
import type { ProviderContext } from 'better-compute/sdk';

/** A Hetzner Cloud account: the API base URL (with `/v1`) and the location servers are created in. */
export const HetznerCloudConfig = z.object({
  endpoint: z.url({ protocol: /^https?$/ }).default('https://api.hetzner.cloud/v1'),
  /** A location name as `GET /v1/locations` lists them (`fsn1`, `nbg1`, `hel1`, `ash`, `hil`, `sin`). */
  region: z.string().regex(/^[a-z]+[0-9]*$/, 'a Hetzner location name, e.g. fsn1'),
});
export type HetznerCloudConfig = z.infer<typeof HetznerCloudConfig>;

/** A server as `GET /v1/servers/{id}` answers it; only the fields the plugin reads. */
export const HetznerServer = z.object({
  id: z.number().int(),
  name: z.string(),
  status: z.string(),
  labels: z.record(z.string(), z.string()),
  public_net: z.object({ ipv4: z.object({ ip: z.string() }).nullable() }),
});
export type HetznerServer = z.infer<typeof HetznerServer>;

/** An action (`create_server`, `start_server`, ...): accepted work whose `status` is `running`, `success` or `error`. */
export const HetznerAction = z.object({ id: z.number().int(), command: z.string(), status: z.enum(['running', 'success', 'error']) });

const Pagination = z.object({ page: z.number().int(), next_page: z.number().int().nullable() });
export const ServerPage = z.object({ servers: z.array(HetznerServer), meta: z.object({ pagination: Pagination }) });
export type ServerPage = z.infer<typeof ServerPage>;
export const ServerAnswer = z.object({ server: HetznerServer });
export const ActionAnswer = z.object({ action: HetznerAction });
export const ServerTypeList = z.object({
  server_types: z.array(
    z.object({ name: z.string(), cores: z.number().int(), memory: z.number(), disk: z.number().int(), deprecated: z.boolean().nullable() }),
  ),
});
export const SshKeyList = z.object({ ssh_keys: z.array(z.object({ id: z.number().int(), name: z.string() })) });

const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** An answer in a shape the plugin does not know is Hetzner's API changing under us: not worth retrying. */
export const read = <T>(schema: z.ZodType<T>, answer: unknown): T => readAnswer('Hetzner Cloud', schema, answer);

// Codes the documentation says go away on their own: `locked` (an action is already running on the resource),
// `conflict` (the resource changed during the request: retry), `rate_limit_exceeded`, `maintenance`, `timeout`.
const transientCodes = new Set(['locked', 'conflict', 'rate_limit_exceeded', 'maintenance', 'timeout', 'unavailable', 'server_error', 'service_error']);

/** Hetzner's error code of a failed answer, when the body has the documented shape. */
export function errorCodeOf(error: unknown): string | undefined {
  return error instanceof HetznerApiError ? error.hetznerCode : undefined;
}

/** A `ProviderError` that also keeps Hetzner's own code (`uniqueness_error`, ...) for the plugin to act on. */
class HetznerApiError extends ProviderError {
  constructor(
    kind: ProviderError['kind'],
    message: string,
    options: { status: number; retryAfterMs: number | undefined },
    readonly hetznerCode: string | undefined,
  ) {
    super(kind, message, options);
  }
}

// The bucket refills one request per second (the reference, "Rate Limiting"); `RateLimit-Reset` is when it is full
// again, up to an hour away, which is far longer than the next request has to wait.
const RATE_LIMIT_REFILL_MS = 1000;

/**
 * Maps a failed answer: the status decides as for any cloud, except that the documented transient codes are retried
 * whatever their status (`locked` is 423, `conflict` 409), and a 429 without `Retry-After` waits one refill.
 */
export function classifyHetznerFailure(status: number, bodyText: string, headers: Headers): ProviderError {
  const parsed = ErrorBody.safeParse(safeJson(bodyText));
  const code = parsed.success ? parsed.data.error.code : undefined;
  const base = classifyHttpFailure(status, bodyText, headers.get('retry-after'));
  const kind = code !== undefined && transientCodes.has(code) ? 'transient' : base.kind;
  const retryAfterMs = base.retryAfterMs ?? (status === 429 ? RATE_LIMIT_REFILL_MS : undefined);
  return new HetznerApiError(kind, base.message, { status, retryAfterMs }, code);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** One Hetzner API call with transient retries; resolves the parsed body. Every call the plugin makes is safe to repeat. */
export function hetznerApi(ctx: ProviderContext<HetznerCloudConfig>) {
  const base = ctx.config.endpoint.replace(/\/+$/, '');
  return (method: string, path: string, body?: unknown): Promise<unknown> =>
    callProviderApi(
      ctx,
      {
        method,
        url: `${base}${path}`,
        headers: {
          authorization: `Bearer ${ctx.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      (response, text) => classifyHetznerFailure(response.status, text, response.headers),
    );
}
