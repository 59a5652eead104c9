import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { loadMasterKey, MasterKey } from '../../services/secrets/masterKey.ts';
import { tempDir } from '../support/natsServer.ts';
import { thrownCode } from '../support/thrownCode.ts';

describe('master key', () => {
  it('loads BC_MASTER_KEY (base64 of 32 bytes) through the config', () => {
    using dir = tempDir();
    const bytes = randomBytes(32);
    const config = loadConfig({ BC_MASTER_KEY: bytes.toString('base64') }, { dataDir: dir.path });
    const key = loadMasterKey(config);
    expect(key.bytes().equals(bytes)).toBe(true);
    expect(key.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(key.keyId).toBe(new MasterKey(bytes).keyId);
  });

  it('refuses a malformed BC_MASTER_KEY with MASTER_KEY_INVALID, without quoting it', () => {
    using dir = tempDir();
    for (const bad of ['not-base64!!', randomBytes(16).toString('base64'), randomBytes(33).toString('base64')]) {
      const config = loadConfig({ BC_MASTER_KEY: bad }, { dataDir: dir.path });
      expect(thrownCode(() => loadMasterKey(config))).toBe('MASTER_KEY_INVALID');
      try {
        loadMasterKey(config);
      } catch (err) {
        expect((err as Error).message).not.toContain(bad);
      }
    }
  });

  it('creates <dataDir>/master.key with mode 0600 when missing, and reuses it', () => {
    using dir = tempDir();
    const config = loadConfig({}, { dataDir: dir.path });
    const first = loadMasterKey(config);
    const file = join(dir.path, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first.bytes())).toBe(true);
    expect(loadMasterKey(config).keyId).toBe(first.keyId);
  });

  it('reads BC_MASTER_KEY_FILE and refuses a malformed file', () => {
    using dir = tempDir();
    const file = join(dir.path, 'elsewhere.key');
    const bytes = randomBytes(32);
    writeFileSync(file, `${bytes.toString('base64')}\n`, { mode: 0o600 });
    expect(
      loadMasterKey(loadConfig({ BC_MASTER_KEY_FILE: file }, { dataDir: dir.path }))
        .bytes()
        .equals(bytes),
    ).toBe(true);
    writeFileSync(file, 'garbage');
    expect(thrownCode(() => loadMasterKey(loadConfig({ BC_MASTER_KEY_FILE: file }, { dataDir: dir.path })))).toBe('MASTER_KEY_INVALID');
  });

  it('shows only its id when serialised or inspected', () => {
    const bytes = randomBytes(32);
    const key = new MasterKey(bytes);
    for (const text of [JSON.stringify({ key }), inspect(key), inspect({ key }, { showHidden: true })]) {
      expect(text).toContain(key.keyId);
      expect(text).not.toContain(bytes.toString('base64'));
      expect(text).not.toContain(bytes.toString('hex'));
    }
  });
});
