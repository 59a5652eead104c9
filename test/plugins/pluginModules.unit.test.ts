import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { loadPluginModules } from '../../services/plugins/pluginModules.ts';

describe('loadPluginModules', () => {
  it('imports plugin modules by path relative to the working directory or absolute, in order', async () => {
    const absolute = fileURLToPath(new URL('../walkthroughs/acme-cloud/plugin.ts', import.meta.url));
    const plugins = await loadPluginModules(['test/walkthroughs/acme-cloud/plugin.ts', absolute]);
    expect(plugins.map((p) => [p.id, p.providers.map((x) => x.id)])).toEqual([
      ['acme-cloud', ['acme-cloud']],
      ['acme-cloud', ['acme-cloud']],
    ]);
  });

  it('refuses a module that exports no plugin', async () => {
    await expect(loadPluginModules(['test/walkthroughs/acme-cloud/provider.ts'])).rejects.toThrow(/exports no plugin/);
  });

  it("takes the deployment's plugin modules from BC_PLUGINS, comma-separated", () => {
    const dataDir = '/nonexistent/bc-plugins-config';
    expect(loadConfig({ BC_PLUGINS: ' ./a/plugin.ts, /opt/b.ts ,' }, { dataDir }).plugins).toEqual(['./a/plugin.ts', '/opt/b.ts']);
    expect(loadConfig({}, { dataDir }).plugins).toEqual([]);
  });
});
