import { createHash, randomBytes } from 'node:crypto';
import { StorageType } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { blobPath } from '../../schemas/blobs.ts';
import { PlatformError } from '../platform/errors.ts';
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
   */
  async grantContent(nodeId: string, sha256: string): Promise<StoredBlob | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    const stored = await this.store.info(`sha256-${sha256}`);
    if (!stored) return undefined;
    const capability = randomBytes(24).toString('base64url');
    await this.store.putBlob({ name: grantName(nodeId, capability) }, new TextEncoder().encode(sha256));
    return { sha256, size: stored.size, url: `${this.baseUrl}${blobPath(nodeId, capability, sha256)}` };
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
    const granted = await this.store.getBlob(grantName(nodeId, capability));
    if (!granted || new TextDecoder().decode(granted) !== sha256) throw missing();
    const bytes = await this.store.getBlob(`sha256-${sha256}`);
    if (!bytes) throw missing();
    return bytes;
  }
}

const grantName = (nodeId: string, capability: string) => `grant-${nodeId}-${capability}`;
