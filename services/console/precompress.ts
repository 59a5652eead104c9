import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Text the browser fetches and compresses well; images and fonts are compressed already. */
const compressible = /\.(js|css|html|svg|json)$/;

/**
 * Writes `<file>.br` and `<file>.gz` beside every compressible file of a build once, at build time, at the highest
 * levels (too slow per request, free here): the API serves them to browsers that accept them (`preCompressed`).
 */
export function precompress(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !compressible.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    writeFileSync(
      `${path}.br`,
      brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
    );
    writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
  }
}
