import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { ConfigError } from '../../services/platform/configError.ts';
import { CONFIG_MODULE_FILE, configFilePath } from '../../services/platform/configFile.ts';
import { tempDir } from '../support/natsServer.ts';

const example = new URL('../../examples/better-compute.config.ts', import.meta.url).pathname;

function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('loaded without an error');
}

describe('the typed deployment config (better-compute.config.ts)', () => {
  it('loads the example through the TypeScript loader, under the environment', () => {
    using dir = tempDir();
    const config = loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: example, BC_HTTP_PORT: '9191' });
    expect(config).toMatchObject({
      httpHost: '0.0.0.0',
      httpPort: 9191,
      publicUrl: 'https://bc.example.net',
      natsAuth: 'operator',
      plugins: ['plugins/acme-autoinstall/index.ts'],
    });
  });

  it('is found in the working directory before <dataDir>/config.json, and BC_CONFIG wins over both', () => {
    using cwd = tempDir();
    using data = tempDir();
    expect(configFilePath({}, data.path, cwd.path)).toBeUndefined();
    writeFileSync(join(data.path, 'config.json'), '{"httpPort": 9001}');
    expect(configFilePath({}, data.path, cwd.path)).toBe(join(data.path, 'config.json'));
    writeFileSync(join(cwd.path, CONFIG_MODULE_FILE), 'const port: number = 9002;\nexport default { httpPort: port };\n');
    expect(configFilePath({}, data.path, cwd.path)).toBe(join(cwd.path, CONFIG_MODULE_FILE));
    expect(loadConfig({ BC_DATA_DIR: data.path, BC_CONFIG: join(cwd.path, CONFIG_MODULE_FILE) }).httpPort).toBe(9002);
    expect(configFilePath({ BC_CONFIG: example }, data.path, cwd.path)).toBe(example);
  });

  it('lists every bad value and every unknown setting with its path, under one stable code', () => {
    using dir = tempDir();
    const file = join(dir.path, 'bad.config.ts');
    writeFileSync(file, "export default { httpPort: 'eighty', streamReplicas: 9, plugins: ['ok.ts', ''], natsAuht: 'none', apiAuth: 'maybe' };\n");
    const err = configErrorOf(() => loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: file, BC_LEASE_MS: '5' }));
    expect(err.reason).toBe('INVALID_SETTING');
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.problems.map((p) => p.path).sort()).toEqual(['apiAuth', 'httpPort', 'leaseMs', 'natsAuht', 'plugins.1', 'streamReplicas']);
    expect(err.problems.find((p) => p.path === 'leaseMs')?.env).toBe('BC_LEASE_MS');
    expect(err.problems.find((p) => p.path === 'httpPort')?.env).toBeUndefined();
    expect(err.message).toContain(file);
    expect(err.message).toContain('natsAuht: not a setting');
  });

  it('refuses a module that throws, or does not export an object, as unreadable', () => {
    using dir = tempDir();
    const cases = {
      'throws.config.ts': "throw new Error('no config today');\n",
      'array.config.ts': 'export default [1, 2];\n',
      'broken.json': '{ "httpPort": ',
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(join(dir.path, name), text);
      const err = configErrorOf(() => loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: join(dir.path, name) }));
      expect(err.reason).toBe('CONFIG_FILE_UNREADABLE');
    }
  });
});
