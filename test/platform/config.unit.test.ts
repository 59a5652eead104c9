import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, natsUrlOf } from '../../services/platform/config.ts';
import { writeStackRecord } from '../../services/platform/stackRecord.ts';
import { thrownCode } from '../support/thrownCode.ts';
import { tempDir } from '../support/natsServer.ts';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    using dir = tempDir();
    const config = loadConfig({ BC_DATA_DIR: dir.path });
    expect(config).toMatchObject({ natsAuth: 'operator', httpPort: 8080, streamReplicas: 1, dataDir: dir.path });
    expect(config.natsUrl).toBeUndefined();
  });

  it('lets the environment override the config file, and the file override defaults', () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, 'config.json'), JSON.stringify({ httpPort: 9000, streamReplicas: 3, natsUrl: 'nats://file:4222' }));
    const config = loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_URL: 'nats://env:4222' });
    expect(config).toMatchObject({ httpPort: 9000, streamReplicas: 3, natsUrl: 'nats://env:4222' });
  });

  it('refuses invalid values and a missing BC_CONFIG file', () => {
    using dir = tempDir();
    expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_HTTP_PORT: 'eighty' })).toThrow();
    expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: join(dir.path, 'nope.json') })).toThrow(/does not exist/);
  });

  it('refuses the retired broker settings, from the environment or the file, instead of ignoring them', () => {
    using dir = tempDir();
    const reasonOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as { reason?: string }).reason;
      }
      return undefined;
    };
    expect(reasonOf(() => loadConfig({ BC_DATA_DIR: dir.path, BC_BROKER_AUTH: 'off' }))).toBe('RETIRED_SETTING');
    expect(reasonOf(() => loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_EMBEDDED: 'true' }))).toBe('RETIRED_SETTING');
    writeFileSync(join(dir.path, 'config.json'), JSON.stringify({ brokerAuth: 'off' }));
    expect(reasonOf(() => loadConfig({ BC_DATA_DIR: dir.path }))).toBe('RETIRED_SETTING');
  });

  it('refuses a BC_NATS_AUTH other than operator or none', () => {
    using dir = tempDir();
    expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_AUTH: 'off' })).toThrow();
    expect(loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_AUTH: 'none' }).natsAuth).toBe('none');
  });

  it('finds the NATS server of the running stack of its data dir when BC_NATS_URL is unset', () => {
    using dir = tempDir();
    const config = loadConfig({ BC_DATA_DIR: dir.path });
    expect(thrownCode(() => natsUrlOf(config))).toBe('PRECONDITION_FAILED');
    writeStackRecord(dir.path, {
      natsUrl: 'nats://127.0.0.1:40001',
      natsAuth: 'operator',
      embedded: true,
      apiUrl: 'http://127.0.0.1:8080',
      pid: process.pid,
      startedAt: new Date().toISOString(),
    });
    expect(natsUrlOf(config)).toBe('nats://127.0.0.1:40001');
    expect(natsUrlOf(loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_URL: 'nats://other:4222' }))).toBe('nats://other:4222');
  });
});
