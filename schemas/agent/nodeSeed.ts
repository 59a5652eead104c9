/**
 * The node seed: what a host deployed from the Better Compute image needs for its first `bcd node` start (site,
 * node, NATS URL, the single-use `node` join token, the join credential URL). The deploy writes it at the start of
 * the image's `bc-seed` partition (MBR type 0xda); the host's init reads it as `key=value` lines after the
 * `bc-seed-v1` magic line, joins, and zeroes it.
 */
export const SEED_MAGIC = 'bc-seed-v1';
export const SEED_PARTITION_TYPE = 0xda;
/** The init reads the first 4 KiB; a seed never comes close. */
export const SEED_MAX_BYTES = 4096;

export interface NodeSeed {
  siteId: string;
  nodeId: string;
  natsUrl: string;
  joinToken: string;
  joinCredsUrl?: string;
}

/**
 * The characters the host's init accepts in a value (ids, URLs, tokens, a comma-separated list of NATS URLs);
 * anything else is refused here, not there.
 */
const SAFE_VALUE = /^[A-Za-z0-9_.,:/@%+=-]+$/;

export class NodeSeedError extends Error {
  override name = 'NodeSeedError';
  readonly code = 'SEED_INVALID' as const;
}

export function encodeNodeSeed(seed: NodeSeed): Buffer {
  const entries: [string, string | undefined][] = [
    ['site', seed.siteId],
    ['node', seed.nodeId],
    ['nats', seed.natsUrl],
    ['token', seed.joinToken],
    ['joincreds', seed.joinCredsUrl],
  ];
  const lines = [SEED_MAGIC];
  for (const [key, value] of entries) {
    if (value === undefined) continue;
    if (!SAFE_VALUE.test(value)) throw new NodeSeedError(`seed ${key} has characters the host cannot read safely`);
    lines.push(`${key}=${value}`);
  }
  const text = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
  if (text.length > SEED_MAX_BYTES) throw new NodeSeedError(`seed of ${text.length} bytes exceeds ${SEED_MAX_BYTES}`);
  return Buffer.concat([text, Buffer.alloc(SEED_MAX_BYTES - text.length)]);
}

const KEYS: Readonly<Record<string, keyof NodeSeed>> = { site: 'siteId', node: 'nodeId', nats: 'natsUrl', token: 'joinToken', joincreds: 'joinCredsUrl' };

/**
 * The seed in the first bytes of a `bc-seed` partition, read as the host's init reads it (unknown keys and unsafe
 * values skipped), or undefined when the partition holds no seed (never written, or zeroed after the join).
 */
export function decodeNodeSeed(bytes: Uint8Array): NodeSeed | undefined {
  const text = Buffer.from(bytes.subarray(0, SEED_MAX_BYTES))
    .toString('utf8')
    .replace(/\0[\s\S]*$/, '');
  const [magic, ...lines] = text.split('\n');
  if (magic !== SEED_MAGIC) return undefined;
  const seed: Partial<NodeSeed> = {};
  for (const line of lines) {
    const at = line.indexOf('=');
    const key = KEYS[line.slice(0, at)];
    const value = line.slice(at + 1);
    if (at > 0 && key && SAFE_VALUE.test(value)) seed[key] = value;
  }
  const { siteId, nodeId, natsUrl, joinToken } = seed;
  if (!siteId || !nodeId || !natsUrl || !joinToken) return undefined;
  return { siteId, nodeId, natsUrl, joinToken, ...(seed.joinCredsUrl ? { joinCredsUrl: seed.joinCredsUrl } : {}) };
}

/** The byte offset of the seed partition in a disk whose first sector (an MBR) is `mbr`, or undefined. */
export function seedPartitionOffset(mbr: Buffer): number | undefined {
  if (mbr.length < 512 || mbr[510] !== 0x55 || mbr[511] !== 0xaa) return undefined;
  for (let i = 0; i < 4; i++) {
    const entry = 446 + i * 16;
    if (mbr[entry + 4] === SEED_PARTITION_TYPE) return mbr.readUInt32LE(entry + 8) * 512;
  }
  return undefined;
}
