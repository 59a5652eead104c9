import { createHash, randomBytes } from 'node:crypto';
import { StorageType } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { blobPath } from '../../schemas/blobs.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { StoredBlob } from '../../schemas/blobs.ts';

export type { StoredBlob };

/** The JetStream object store bucket that holds step artefacts (ISOs, seeds): stream `OBJ_bc_blobs`, subjects `$O.bc_blobs.>`. */
export const BLOB_BUCKET = 'bc_blobs';
const SHA256 = /^[0-9a-f]{64}$/;
const CAPABILITY = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * Step artefacts, stored once under their sha256 and handed out through per-node capability URLs
 * (`<base>/v1/blobs/<nodeId>/<capability>/<sha256>`). The capability is random, so an artefact carrying a join token
 * cannot be found by guessing; the sha256 in the URL lets a cache verify what it serves.
 */
export class BlobStore {
  #prunedAt = 0;

  private constructor(
    private readonly store: ObjectStore,
    private readonly baseUrl: string,
  ) {}

  static async open(nc: NatsConnection, baseUrl: string): Promise<BlobStore> {
    return new BlobStore(await new Objm(nc).create(BLOB_BUCKET, { storage: StorageType.File }), baseUrl.replace(/\/+$/, ''));
  }

  async put(nodeId: string, bytes: Uint8Array, name = 'artefact'): Promise<StoredBlob> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const contentName = `sha256-${sha256}`;
    if (!(await this.store.info(contentName))) await this.store.putBlob({ name: contentName, description: name }, bytes);
    const capability = randomBytes(24).toString('base64url');
    await this.store.putBlob({ name: grantName(nodeId, capability) }, new TextEncoder().encode(sha256));
    return { sha256, size: bytes.byteLength, url: `${this.baseUrl}${blobPath(nodeId, capability, sha256)}` };
  }

  /**
   * Stores `bytes` under their sha256 with no capability URL: content the control plane reads itself by digest (module
   * bundles, `fleet.publishModuleVersion`), never handed to a node through this store.
   */
  async putContent(bytes: Uint8Array, name = 'content'): Promise<{ sha256: string; size: number }> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const contentName = `sha256-${sha256}`;
    if (!(await this.store.info(contentName))) await this.store.putBlob({ name: contentName, description: name }, bytes);
    return { sha256, size: bytes.byteLength };
  }

  /**
   * A capability URL for `nodeId` to content already stored by digest (a published module bundle the rollout controller
   * hands a host): the bytes are not read or copied, only the grant is written. Undefined when nothing is stored there.
   *
   * With `terms`, the grant is the one of `terms.key` (an agent command's id): asking again for the same key returns
   * the same URL and writes no second grant (a resend of the command reuses it), only moving its expiry later. From
   * `terms.expiresAtMs` on, the grant reads as missing and is deleted by the next prune (`pruneExpiredGrants`, run at
   * most every few minutes by the grants themselves): grants do not pile up in the bucket.
   */
  async grantContent(nodeId: string, sha256: string, terms?: GrantTerms, now = Date.now()): Promise<StoredBlob | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    const stored = await this.store.info(`sha256-${sha256}`);
    if (!stored) return undefined;
    this.#pruneNowAndThen(now);
    const granted = (capability: string): StoredBlob => ({ sha256, size: stored.size, url: `${this.baseUrl}${blobPath(nodeId, capability, sha256)}` });
    if (terms === undefined) {
      const capability = randomBytes(24).toString('base64url');
      await this.store.putBlob({ name: grantName(nodeId, capability) }, new TextEncoder().encode(sha256));
      return granted(capability);
    }
    const index = keyedGrantName(nodeId, terms.key);
    const known = await this.store.getBlob(index);
    const capability = known ? new TextDecoder().decode(known) : randomBytes(24).toString('base64url');
    const grant = known ? grantOf(await this.store.getBlob(grantName(nodeId, capability))) : undefined;
    const expiresAtMs = Math.max(terms.expiresAtMs, grant?.sha256 === sha256 && grant.expiresAtMs !== null ? grant.expiresAtMs : 0);
    if (grant?.sha256 === sha256 && grant.expiresAtMs === expiresAtMs && expiresAtMs > now) return granted(capability);
    const expiring = { description: `${EXPIRES_AT}${expiresAtMs}` };
    await this.store.putBlob({ name: grantName(nodeId, capability), ...expiring }, new TextEncoder().encode(`${sha256} ${expiresAtMs}`));
    if (!known) await this.store.putBlob({ name: index, ...expiring }, new TextEncoder().encode(capability));
    return granted(capability);
  }

  /** Deletes every expiring grant (and its key's index) past its expiry; how many objects it deleted. */
  async pruneExpiredGrants(now = Date.now()): Promise<number> {
    this.#prunedAt = now;
    let deleted = 0;
    for (const info of await this.store.list()) {
      const expiresAtMs = info.description?.startsWith(EXPIRES_AT) ? Number(info.description.slice(EXPIRES_AT.length)) : NaN;
      if (!(expiresAtMs <= now) || !info.name.startsWith('grant')) continue;
      await this.store.delete(info.name);
      deleted++;
    }
    return deleted;
  }

  /** Runs a prune in the background when none ran for `PRUNE_EVERY_MS`: the bucket keeps no grant long past its expiry. */
  #pruneNowAndThen(now: number): void {
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    void this.pruneExpiredGrants(now).catch(() => undefined);
  }

  /** The bytes stored under `sha256`, checked against it; undefined when none are. */
  async readContent(sha256: string): Promise<Uint8Array | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    const bytes = await this.store.getBlob(`sha256-${sha256}`);
    if (!bytes || createHash('sha256').update(bytes).digest('hex') !== sha256) return undefined;
    return bytes;
  }

  /** The artefact a capability URL names; NOT_FOUND for anything else, the same answer whether the node, capability or digest is wrong. */
  async read(nodeId: string, capability: string, sha256: string): Promise<Uint8Array> {
    const missing = () => new PlatformError('NOT_FOUND', 'no such blob');
    if (!SHA256.test(sha256) || !CAPABILITY.test(capability)) throw missing();
    const grant = grantOf(await this.store.getBlob(grantName(nodeId, capability)));
    if (grant?.sha256 !== sha256 || (grant.expiresAtMs !== null && grant.expiresAtMs <= Date.now())) throw missing();
    const bytes = await this.store.getBlob(`sha256-${sha256}`);
    if (!bytes) throw missing();
    return bytes;
  }
}

/** A grant of `BlobStore.grantContent` with terms: one per key (a command id), until it expires. */
export interface GrantTerms {
  readonly key: string;
  readonly expiresAtMs: number;
}

/** Expired grants are pruned at most this often (each prune lists the bucket). */
const PRUNE_EVERY_MS = 10 * 60_000;
/** The description an expiring grant (and its key's index) carries: what a prune reads without fetching the grant. */
const EXPIRES_AT = 'expires-at ';

const grantName = (nodeId: string, capability: string) => `grant-${nodeId}-${capability}`;
/** The index of a keyed grant: its capability, found from the key (the key itself is guessable, the capability not). */
const keyedGrantName = (nodeId: string, key: string) => `grantkey-${nodeId}-${createHash('sha256').update(key).digest('hex')}`;

/** A grant's body: the digest it opens, and its expiry unless it has none (`<sha256>` or `<sha256> <expiresAtMs>`). */
function grantOf(body: Uint8Array | null): { sha256: string; expiresAtMs: number | null } | undefined {
  if (!body) return undefined;
  const [sha256, expiresAt, ...rest] = new TextDecoder().decode(body).split(' ');
  if (!sha256 || rest.length > 0) return undefined;
  if (expiresAt === undefined) return { sha256, expiresAtMs: null };
  const expiresAtMs = Number(expiresAt);
  return Number.isFinite(expiresAtMs) ? { sha256, expiresAtMs } : undefined;
}
