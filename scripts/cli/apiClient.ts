/** A thin client for the HTTP API: the CLI talks to NATS and files only in `doctor` and `broker`, which run on the control-plane host. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

export class ApiClient {
  /** `token`: the bearer token sent with every request (none with `BC_API_AUTH=off`). */
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  /**
   * The server-sent events of a streaming route (`follow=1`), as `{ event, id, data }` with `data` parsed, until the
   * server ends the stream or the caller stops iterating.
   */
  async *events(path: string): AsyncGenerator<{ event: string; id: string | undefined; data: unknown }> {
    const headers: Record<string, string> = this.token ? { authorization: `Bearer ${this.token}` } : {};
    const res = await fetch(new URL(path, this.baseUrl), { headers }).catch((err: unknown) => {
      throw new ApiError(0, 'UNAVAILABLE', `cannot reach the API at ${this.baseUrl} (${String((err as Error).cause ?? err)})`);
    });
    if (!res.ok || !res.body) {
      const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      throw new ApiError(res.status, typeof json.code === 'string' ? json.code : 'INTERNAL', typeof json.detail === 'string' ? json.detail : res.statusText);
    }
    let buffer = '';
    for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(frame)?.[1];
        const data = field('data');
        if (data !== undefined) yield { event: field('event') ?? 'message', id: field('id'), data: JSON.parse(data) };
      }
    }
  }

  async command<T>(name: string, body: unknown, idempotencyKey?: string): Promise<T> {
    return this.call<T>('POST', `/v1/commands/${name}`, body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
  }

  /** `body`: JSON, or bytes sent as they are (`application/octet-stream`: module bundles). */
  async call<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
    const headers = this.token ? { authorization: `Bearer ${this.token}`, ...extraHeaders } : extraHeaders;
    const raw = body instanceof Uint8Array;
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: body === undefined ? headers : { 'content-type': raw ? 'application/octet-stream' : 'application/json', ...headers },
        body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(
        0,
        'UNAVAILABLE',
        `cannot reach the API at ${this.baseUrl} (${String((err as Error).cause ?? err)}); is it running? set --api or BC_API_URL`,
      );
    }
    const text = await res.text();
    const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!res.ok)
      throw new ApiError(
        res.status,
        typeof json.code === 'string' ? json.code : 'INTERNAL',
        typeof json.detail === 'string' ? json.detail : res.statusText,
        (json.issues as never) ?? [],
      );
    return json as T;
  }
}
