import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { writeFileDurably } from '../agent/durableFile.ts';
import { AgentError } from '../agent/errors.ts';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Images the site agent serves to its machines (`<stateDir>/images/<sha256>`). A source URL is registered with
 * its sha256; the first request fetches it once, verifies the digest and only then makes it servable, so a
 * machine never reads bytes nobody checked. Registered sources survive restarts (`sources.json`).
 */
export class ImageCache {
  readonly dir: string;
  readonly #sourcesFile: string;
  readonly #sources: Record<string, string>;
  readonly #fetching = new Map<string, Promise<string>>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'images');
    mkdirSync(this.dir, { recursive: true });
    this.#sourcesFile = join(this.dir, 'sources.json');
    this.#sources = existsSync(this.#sourcesFile) ? (JSON.parse(readFileSync(this.#sourcesFile, 'utf8')) as Record<string, string>) : {};
  }

  /** Makes `sha256` servable from `sourceUrl` (fetched on first use). */
  register(sourceUrl: string, sha256: string): void {
    if (!SHA256.test(sha256)) throw new AgentError('INVALID_COMMAND', 'sha256 must be 64 lower-case hex digits');
    if (this.#sources[sha256] === sourceUrl) return;
    this.#sources[sha256] = sourceUrl;
    writeFileDurably(this.#sourcesFile, JSON.stringify(this.#sources, null, 2), { mode: 0o644 });
  }

  known(sha256: string): boolean {
    return SHA256.test(sha256) && (this.#sources[sha256] !== undefined || existsSync(join(this.dir, sha256)));
  }

  /** Path of the verified file, fetching it first if needed; undefined for an unknown digest. */
  async path(sha256: string): Promise<string | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    const file = join(this.dir, sha256);
    if (existsSync(file)) return file;
    const source = this.#sources[sha256];
    if (source === undefined) return undefined;
    let pending = this.#fetching.get(sha256);
    if (!pending) {
      pending = this.#fetch(source, sha256, file).finally(() => this.#fetching.delete(sha256));
      this.#fetching.set(sha256, pending);
    }
    return pending;
  }

  size(file: string): number {
    return statSync(file).size;
  }

  async #fetch(source: string, sha256: string, file: string): Promise<string> {
    const tmp = `${file}.partial`;
    let response: Response;
    try {
      response = await fetch(source);
    } catch (cause) {
      throw new AgentError('IMAGE_UNAVAILABLE', `fetching ${source} failed`, { cause });
    }
    if (!response.ok || !response.body) throw new AgentError('IMAGE_UNAVAILABLE', `fetching ${source} answered ${response.status}`);
    const hash = createHash('sha256');
    try {
      await pipeline(
        Readable.fromWeb(response.body),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(tmp),
      );
      const digest = hash.digest('hex');
      if (digest !== sha256) throw new AgentError('IMAGE_CHECKSUM_MISMATCH', `${source} hashes to ${digest}, expected ${sha256}`);
      const handle = await open(tmp, 'r+');
      await handle.sync();
      await handle.close();
      renameSync(tmp, file);
      return file;
    } catch (err) {
      rmSync(tmp, { force: true });
      if (err instanceof AgentError) throw err;
      throw new AgentError('IMAGE_UNAVAILABLE', `fetching ${source} failed`, { cause: err });
    }
  }
}
