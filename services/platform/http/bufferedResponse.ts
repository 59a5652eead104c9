/** Node's `Response`, as a base a class can override: its typings declare the readers as properties, not methods. */
const ResponseBase = Response as unknown as new (body: null, init: ResponseInit) => object;

/**
 * A standard `Response` over a body already read whole. Node's `Response` wraps any body in a WHATWG ReadableStream
 * when it is built (made transferable); `text`, `json`, `arrayBuffer` and `bytes`, which are what API clients call,
 * need no stream, so one is made only when something asks for the stream itself (`body`, `blob`, `formData`,
 * `clone`). A body is read once, as with any Response. `npx tsx scripts/bench/probe/responseCost.ts` measures it.
 */
class BufferedResponse extends ResponseBase {
  readonly #bytes: Buffer | null;
  #read = false;
  #streamed: Response | undefined;

  constructor(bytes: Buffer | null, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  /** The same answer as a Response of Node's own, built the first time the stream is needed. */
  #stream(): Response {
    if (this.#streamed) return this.#streamed;
    const { status, statusText, headers } = this as unknown as Response;
    this.#streamed = new Response(this.#bytes, { status, statusText, headers });
    // A body read through the fast path stays read for the stream too.
    if (this.#read) void this.#streamed.arrayBuffer();
    return this.#streamed;
  }

  #take(): Buffer {
    if (this.#read) throw new TypeError('Body is unusable: Body has already been read');
    this.#read = true;
    return this.#bytes ?? Buffer.alloc(0);
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#stream().body;
  }

  get bodyUsed(): boolean {
    return this.#streamed ? this.#streamed.bodyUsed : this.#read;
  }

  async text(): Promise<string> {
    return this.#streamed ? this.#streamed.text() : this.#take().toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#streamed) return this.#streamed.arrayBuffer();
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer());
  }

  blob(): Promise<Blob> {
    return this.#stream().blob();
  }

  formData(): Promise<FormData> {
    return this.#stream().formData();
  }

  clone(): Response {
    return this.#stream().clone();
  }
}

export function bufferedResponse(bytes: Buffer | null, init: ResponseInit): Response {
  return new BufferedResponse(bytes, init) as unknown as Response;
}
