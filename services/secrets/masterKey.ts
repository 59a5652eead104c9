import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { Config } from '../platform/config.ts';
import { PlatformError } from '../platform/errors.ts';
import { KEY_BYTES, loadKeyMaterial } from '../platform/keyMaterial.ts';

/**
 * The key secrets are sealed with. The bytes sit in a private field and the object serialises as its id only, so
 * logging it by mistake (`log.info({ key })`, `JSON.stringify`) shows `{ keyId }` and nothing else.
 */
export class MasterKey {
  readonly #bytes: Buffer;
  /** 16 hex digits of SHA-256 over a label and the key: names the key in sealed values without revealing it. */
  readonly keyId: string;

  constructor(bytes: Buffer) {
    if (bytes.length !== KEY_BYTES) throw new PlatformError('MASTER_KEY_INVALID', `the master key must be ${KEY_BYTES} bytes, got ${bytes.length}`);
    this.#bytes = Buffer.from(bytes);
    this.keyId = createHash('sha256').update('bc.master-key-id/v1').update(bytes).digest('hex').slice(0, 16);
  }

  /** The raw key, for the cipher only. */
  bytes(): Buffer {
    return this.#bytes;
  }

  toJSON() {
    return { keyId: this.keyId };
  }

  [inspect.custom]() {
    return `MasterKey(${this.keyId})`;
  }
}

/**
 * The master key: `BC_MASTER_KEY` (base64) when set, else the key file (`BC_MASTER_KEY_FILE`, default
 * `<dataDir>/master.key`), created with a random key and mode 0600 when missing. Every process of one control plane
 * must load the same key: what one seals, another opens.
 */
export function loadMasterKey(config: Pick<Config, 'dataDir' | 'masterKey' | 'masterKeyFile'>): MasterKey {
  const file = config.masterKeyFile ?? join(config.dataDir, 'master.key');
  return new MasterKey(loadKeyMaterial({ value: config.masterKey, valueName: 'BC_MASTER_KEY', file, code: 'MASTER_KEY_INVALID' }));
}
