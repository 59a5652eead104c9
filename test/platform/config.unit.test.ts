import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { tempDir } from '../support/natsServer.ts';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    using dir = tempDir();
    expect(loadConfig({ BC_DATA_DIR: dir.path })).toMatchObject({ natsUrl: 'nats://127.0.0.1:4222', natsUrlExplicit: false, httpPort: 8080, streamReplicas: 1, dataDir: dir.path });
  });

  it('lets the environment override the config file, and the file override defaults', () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, 'config.json'), JSON.stringify({ httpPort: 9000, streamReplicas: 3, natsUrl: 'nats://file:4222' }));
    const config = loadConfig({ BC_DATA_DIR: dir.path, BC_NATS_URL: 'nats://env:4222' });
    expect(config).toMatchObject({ httpPort: 9000, streamReplicas: 3, natsUrl: 'nats://env:4222', natsUrlExplicit: true });
  });

  it('refuses invalid values and a missing BC_CONFIG file', () => {
    using dir = tempDir();
    expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_HTTP_PORT: 'eighty' })).toThrow();
    expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: join(dir.path, 'nope.json') })).toThrow(/does not exist/);
  });
});
