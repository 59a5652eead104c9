import { z } from 'zod';

export const HttpProxyMethod = z.enum(['GET', 'POST', 'PUT', 'DELETE']);

/** A header name as RFC 9110 `token`: anything else (spaces, colons, line breaks) could smuggle a second header. */
const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/, 'must be an HTTP header name');
/** Header values travel on one line: CR, LF and NUL would split the request. */
const HeaderValue = z
  .string()
  .max(4096)
  .regex(/^[^\r\n\0]*$/, 'must not contain line breaks');
const SecretRef = z.string().regex(/^secret:[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a secret reference (secret:<id>)');

/**
 * `site.httpProxy`: one HTTP request to a machine's own API, made by its site agent (the control plane never
 * reaches into a site directly). Secrets travel only as references the agent resolves; TLS is pinned by SPKI.
 */
export const HttpProxyRequest = z
  .object({
    url: z.string().url().max(2048),
    method: HttpProxyMethod.default('GET'),
    headers: z.record(HeaderName, HeaderValue).default({}),
    secretHeaders: z.record(HeaderName, SecretRef).default({}),
    body: z.string().max(65_536).optional(),
    /** base64 SHA-256 of the peer's SubjectPublicKeyInfo: required for https (machine certs are self-signed). */
    tlsSpkiSha256: z
      .string()
      .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be a base64 SHA-256')
      .optional(),
    timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
    /** With `poll`: the caller wants the newest settled answer under this key while the next request goes out. */
    key: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/)
      .optional(),
    poll: z.boolean().default(false),
    /** Set by the executor, never by a step: lets the site agent be granted exactly the `secretHeaders` refs. */
    secretTicket: z.string().max(2_048).optional(),
  })
  .strict();
export type HttpProxyRequest = z.infer<typeof HttpProxyRequest>;

/** What the agent reports: the status and (bounded) body; redirects and oversize answers are failures instead. */
export const HttpProxyAnswer = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
});
export type HttpProxyAnswer = z.infer<typeof HttpProxyAnswer>;

/** Largest response body the agent relays. */
export const HTTP_PROXY_MAX_RESPONSE_BYTES = 1 << 20;
