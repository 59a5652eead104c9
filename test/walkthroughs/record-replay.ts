/**
 * Record a provider's HTTP exchanges once against a live (or emulated) cloud, then answer the same requests offline
 * from the file; any provider's (the Acme and Hetzner Cloud conformance tests use it). Only method, path+query, request body and the answer are kept: the host is dropped (the emulator's
 * port changes every run) and request headers are never stored, so the account token never reaches the file.
 */
import { readFile, writeFile } from 'node:fs/promises';

/** One request and its answer, or `networkError` when `fetch` threw. */
export interface RecordedExchange {
  method: string;
  /** Path and query, without scheme and host. */
  path: string;
  requestBody: string | null;
  status: number;
  /** The status line's reason phrase: Proxmox VE puts its error message there, not in the body. */
  statusText?: string;
  /** Only the headers a provider acts on. */
  headers: Record<string, string>;
  body: string;
  networkError?: string;
}

export interface Recording {
  version: 1;
  exchanges: RecordedExchange[];
}

// What a provider may act on; anything else (dates, connection) would only make recordings differ run to run.
const keptHeaders = ['content-type', 'retry-after', 'location'];
const nullBodyStatuses = new Set([101, 204, 205, 304]);

function describeRequest(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): { method: string; path: string; requestBody: string | null } {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const body = init?.body;
  if (body !== undefined && body !== null && typeof body !== 'string') {
    throw new TypeError('record/replay handles string request bodies only');
  }
  return { method, path: `${url.pathname}${url.search}`, requestBody: body ?? null };
}

/** Wraps `inner` so every exchange is recorded; `save` writes them as JSON. */
export function recordingFetch(inner: typeof fetch): { fetch: typeof fetch; recording(): Recording; save(path: string): Promise<void> } {
  const exchanges: RecordedExchange[] = [];
  const recorded: typeof fetch = async (input, init) => {
    const request = describeRequest(input, init);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      exchanges.push({ ...request, status: 0, headers: {}, body: '', networkError: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    const body = await response.text();
    const headers: Record<string, string> = {};
    for (const name of keptHeaders) {
      const value = response.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    const { status, statusText } = response;
    exchanges.push({ ...request, status, ...(statusText ? { statusText } : {}), headers, body });
    return new Response(nullBodyStatuses.has(status) ? null : body, { status, statusText, headers });
  };
  const recording = (): Recording => ({ version: 1, exchanges: exchanges.map((e) => ({ ...e, headers: { ...e.headers } })) });
  return {
    fetch: recorded,
    recording,
    async save(path) {
      await writeFile(path, `${JSON.stringify(recording(), null, 2)}\n`, 'utf8');
    },
  };
}

/** Reads a recording written by `recordingFetch(...).save`. */
export async function loadRecording(path: string): Promise<Recording> {
  const parsed = JSON.parse(await readFile(path, 'utf8')) as Recording;
  if (parsed.version !== 1 || !Array.isArray(parsed.exchanges)) throw new Error(`${path} is not a version 1 recording`);
  return parsed;
}

/**
 * A `fetch` that never touches the network: each request is answered by the first unconsumed exchange with the same
 * method, path and body. Identical requests (state polls) therefore replay in recorded order, and a client that
 * behaves as it did while recording consumes every exchange. A request with no such exchange throws.
 */
export function replayingFetch(recording: Recording): { fetch: typeof fetch; remaining(): number } {
  const unconsumed = recording.exchanges.map((exchange) => ({ exchange, used: false }));
  const replayed: typeof fetch = async (input, init) => {
    const request = describeRequest(input, init);
    const entry = unconsumed.find(
      ({ exchange, used }) => !used && exchange.method === request.method && exchange.path === request.path && exchange.requestBody === request.requestBody,
    );
    if (!entry) {
      const left = unconsumed.filter((e) => !e.used).length;
      throw new Error(`replay: no recorded exchange left for ${request.method} ${request.path} body=${request.requestBody ?? '(none)'} (${left} unconsumed)`);
    }
    entry.used = true;
    const { exchange } = entry;
    if (exchange.networkError !== undefined) throw new TypeError(`fetch failed (recorded): ${exchange.networkError}`);
    return new Response(nullBodyStatuses.has(exchange.status) ? null : exchange.body, {
      status: exchange.status,
      ...(exchange.statusText ? { statusText: exchange.statusText } : {}),
      headers: exchange.headers,
    });
  };
  return { fetch: replayed, remaining: () => unconsumed.filter((e) => !e.used).length };
}
