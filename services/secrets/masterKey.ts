import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { Config } from '../platform/config.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { decodeKey, KEY_BYTES, loadKeyMaterial } from '../platform/keyMaterial.ts';

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

/** Parses a master key as the environment or the key file holds it; throws MASTER_KEY_INVALID naming `source`. */
export function parseMasterKey(text: string, source: string): MasterKey {
  return new MasterKey(decodeKey(text, source, 'MASTER_KEY_INVALID'));
}

/** Where the master key lives when `BC_MASTER_KEY` is unset: `BC_MASTER_KEY_FILE`, else `<dataDir>/master.key`. */
export const masterKeyFileOf = (config: Pick<Config, 'dataDir' | 'masterKeyFile'>) => config.masterKeyFile ?? join(config.dataDir, 'master.key');

/**
 * The master key: `BC_MASTER_KEY` (base64) when set, else the key file (`BC_MASTER_KEY_FILE`, default
 * `<dataDir>/master.key`), created with a random key and mode 0600 when missing. Every process of one control plane
 * must load the same key: what one seals, another opens.
 */
export function loadMasterKey(config: Pick<Config, 'dataDir' | 'masterKey' | 'masterKeyFile'>): MasterKey {
  return new MasterKey(loadKeyMaterial({ value: config.masterKey, valueName: 'BC_MASTER_KEY', file: masterKeyFileOf(config), code: 'MASTER_KEY_INVALID' }));
}
