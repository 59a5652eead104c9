import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionContext } from '../../daemon/agent/commandRunner.ts';
import { writeNodeSeed } from '../../daemon/ramdisk/seedWrite.ts';
import { SEED_MAX_BYTES, SEED_PARTITION_TYPE, decodeNodeSeed, encodeNodeSeed } from '../../schemas/agent/nodeSeed.ts';
import { readPrefix } from '../support/diskFile.ts';

const ctx: ExecutionContext = { heartbeat: () => undefined, signal: new AbortController().signal };
const dir = mkdtempSync(join(tmpdir(), 'seed-write-'));
const seed = encodeNodeSeed({ siteId: 's1', nodeId: 'n1', natsUrl: 'nats://10.0.0.1:4222', joinToken: 'bcj_jt-seedtest_not-a-real-secret' });
const sha256 = createHash('sha256').update(seed).digest('hex');
let server: Server;
let base = '';

/** A 2 MiB disk whose MBR has a bc-seed partition at LBA 2048 (or no partition table at all). */
function disk(name: string, withSeedPartition: boolean): string {
  const bytes = Buffer.alloc(4 << 20, 0x5a);
  bytes.fill(0, 0, 512);
  if (withSeedPartition) {
    bytes[446 + 32 + 4] = SEED_PARTITION_TYPE;
    bytes.writeUInt32LE(2048, 446 + 32 + 8);
    bytes[510] = 0x55;
    bytes[511] = 0xaa;
  }
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/seed') return void res.writeHead(200).end(seed);
    if (req.url === '/other') return void res.writeHead(200).end(Buffer.alloc(SEED_MAX_BYTES, 1));
    res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('writing the node seed into the deployed image', () => {
  it('writes the fetched seed at the start of the bc-seed partition and reads it back, leaving the rest alone', async () => {
    const path = disk('seeded.img', true);
    const result = await writeNodeSeed(path, { url: `${base}/seed`, sha256 }, ctx, undefined);
    expect(result).toEqual({ written: true, disk: path, offset: 2048 * 512, sha256, verified: true });
    const bytes = readPrefix(path, 4 << 20);
    expect(decodeNodeSeed(bytes.subarray(2048 * 512))).toMatchObject({ siteId: 's1', nodeId: 'n1' });
    expect(bytes.subarray(2048 * 512 + SEED_MAX_BYTES).every((b) => b === 0x5a)).toBe(true);
    expect(bytes.subarray(512, 2048 * 512).every((b) => b === 0x5a)).toBe(true);
  });

  it('writes nothing on an image without a bc-seed partition, and says so', async () => {
    const path = disk('plain.img', false);
    const before = readPrefix(path, 4 << 20);
    expect(await writeNodeSeed(path, { url: `${base}/seed`, sha256 }, ctx, undefined)).toMatchObject({ written: false, disk: path });
    expect(readPrefix(path, 4 << 20).equals(before)).toBe(true);
  });

  it('refuses bytes that do not hash to the digest the command named, writing nothing', async () => {
    const path = disk('mismatch.img', true);
    const before = readPrefix(path, 4 << 20);
    await expect(writeNodeSeed(path, { url: `${base}/other`, sha256 }, ctx, undefined)).rejects.toMatchObject({ code: 'IMAGE_CHECKSUM_MISMATCH' });
    expect(readPrefix(path, 4 << 20).equals(before)).toBe(true);
  });

  it('refuses a correctly hashed artefact that is not a node seed', async () => {
    const other = Buffer.alloc(SEED_MAX_BYTES, 1);
    const path = disk('notaseed.img', true);
    await expect(writeNodeSeed(path, { url: `${base}/other`, sha256: createHash('sha256').update(other).digest('hex') }, ctx, undefined)).rejects.toMatchObject(
      { code: 'INVALID_COMMAND' },
    );
  });
});
