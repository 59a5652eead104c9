import type { IncomingHttpHeaders } from 'node:http';
import type { RawResponse, Transport } from './transport.ts';

export interface TransientPolicy {
  /** Further attempts after the first 429/503; then the answer is the caller's. */
  retries: number;
  /** The longest wait between attempts, whatever Retry-After asks for. */
  maxDelayMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const raw = headers['retry-after'];
  const value = (Array.isArray(raw) ? (raw as string[])[0] : raw)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * 429 (throttled) and 503 (busy, e.g. a BMC's web server restarting after a configuration change) say the BMC did not
 * act on the request, so sending it again is safe even for an action. The request is sent again after the
 * `Retry-After` the BMC asked for (else 1 s, doubling), at most `retries` times and never waiting past `maxDelayMs`.
 */
export function retryingTransient(transport: Transport, policy: TransientPolicy): Transport {
  return async (req) => {
    let res: RawResponse = await transport(req);
    for (let attempt = 0; attempt < policy.retries && (res.status === 429 || res.status === 503); attempt += 1) {
      const asked = retryAfterMs(res.headers) ?? 1_000 * 2 ** attempt;
      await sleep(Math.min(asked, policy.maxDelayMs));
      res = await transport(req);
    }
    return res;
  };
}
