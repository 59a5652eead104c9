import type { z } from 'zod';
import { classifyFetchFailure, classifyHttpFailure, ProviderError, withTransientRetry, type ProviderContext } from './provider.ts';

/** One request to a cloud's HTTP API, as the provider builds it (its auth header, its body encoding). */
export interface ProviderApiRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** How a non-2xx answer becomes a `ProviderError` (a cloud's own error codes); default `classifyHttpFailure`. */
export type ClassifyApiFailure = (response: Response, bodyText: string) => ProviderError;

const byStatus: ClassifyApiFailure = (response, bodyText) => classifyHttpFailure(response.status, bodyText, response.headers.get('retry-after'));

/**
 * One call of a cloud's JSON API through `ctx.fetch`, retried while transient (`withTransientRetry`): a fetch that
 * throws is transient, a non-2xx answer is what `classify` says, and a 2xx body is parsed as JSON (undefined when
 * empty; a body that is not JSON is `rejected`). Use it only for calls that are safe to repeat.
 */
export function callProviderApi(ctx: ProviderContext<unknown>, request: ProviderApiRequest, classify: ClassifyApiFailure = byStatus): Promise<unknown> {
  const { method, url, headers, body } = request;
  return withTransientRetry(
    async () => {
      let response: Response;
      try {
        response = await ctx.fetch(url, { method, headers, body, signal: ctx.signal });
      } catch (error) {
        throw classifyFetchFailure(error);
      }
      const text = await response.text();
      if (!response.ok) throw classify(response, text);
      try {
        return text === '' ? undefined : (JSON.parse(text) as unknown);
      } catch (error) {
        throw new ProviderError('rejected', `${method} ${new URL(url).pathname} answered with a body that is not JSON`, { cause: error });
      }
    },
    { signal: ctx.signal },
  );
}

/** An answer in a shape the provider does not know is the cloud's API changing under it: `rejected`, not retried. */
export function readAnswer<T>(cloud: string, schema: z.ZodType<T>, answer: unknown): T {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new ProviderError('rejected', `${cloud} answered in an unexpected shape`, { cause: parsed.error });
  return parsed.data;
}
