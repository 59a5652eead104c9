import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProduct } from '../../scripts/build/build.ts';
import { compiledDir, compiledEntry, repoRoot, stampFile } from '../../scripts/build/compiledEntry.mjs';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { startServeProcess } from '../support/serveProcess.ts';

// `npm run build` itself (tsc over the product; long on a loaded machine), once for the file.
beforeAll(() => void buildProduct({ quiet: true }), 600_000);

describe('the compiled build (npm run build)', () => {
  it('runs a commands service from dist/node, without tsx, that answers commands over NATS', async () => {
    await using nats = await startTestNats();
    using data = tempDir();
    const nc = await connectNats(nats.url, 'compiled-build-test');
    try {
      await ensureStreams(nc, loadConfig({ BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: data.path }));
      await using serve = await startServeProcess(['commands'], { BC_NATS_URL: nats.url, BC_NATS_AUTH: 'none', BC_DATA_DIR: data.path }, 120_000, {
        compiled: true,
      });
      const argv = readFileSync(`/proc/${serve.pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toContain(join(compiledDir, 'services/stack/serve.js'));
      expect(argv.join(' ')).not.toContain('tsx');
      const result = await sendCommand(nc, 'site.create', { siteId: 'dc1', name: 'DC 1' });
      expect(result.events.map((e) => e.type)).toEqual(['SiteCreated']);
    } finally {
      await nc.close();
    }
  });

  it('starts the programs of a compiled process compiled, and those of the sources through tsx', async () => {
    const compiled = (await import(pathToFileURL(join(compiledDir, 'services/stack/program.js')).href)) as typeof import('../../services/stack/program.ts');
    const source = await import('../../services/stack/program.ts');
    const serveOf = (module: string) => new URL('./serve.ts', pathToFileURL(module));
    expect(compiled.runsCompiled).toBe(true);
    expect(compiled.programArgs(serveOf(join(compiledDir, 'services/stack/supervisor.js')))).toEqual([join(compiledDir, 'services/stack/serve.js')]);
    expect(source.runsCompiled).toBe(false);
    expect(source.programArgs(serveOf(join(repoRoot, 'services/stack/supervisor.ts')))).toEqual(['--import', 'tsx', join(repoRoot, 'services/stack/serve.ts')]);
  });

  it('hands a TypeScript plugin loaded by a compiled process the compiled SDK, so its errors are the product’s', () => {
    // A child of its own: the loader hooks it registers must not leak into the test process.
    const probe = `
      const { loadPluginModules } = await import(${JSON.stringify(pathToFileURL(join(compiledDir, 'services/plugins/pluginModules.js')).href)});
      const [plugin] = await loadPluginModules(['test/walkthroughs/acme-cloud/plugin.ts']);
      const { ProviderError } = await import(${JSON.stringify(pathToFileURL(join(compiledDir, 'plugins/sdk/provider.js')).href)});
      const viaPlugin = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'test/walkthroughs/acme-cloud/provider.ts')).href)});
      const refused = async () => new Response('{"error":"unauthorized"}', { status: 401, headers: { 'content-type': 'application/json' } });
      const client = viaPlugin.acmeCloudProvider.create({ config: { endpoint: 'http://127.0.0.1:9', region: 'fra1' }, token: 'x', fetch: refused });
      const error = await client.getInstance('i-1').then(() => undefined, (err) => err);
      console.log(JSON.stringify({ plugin: plugin.id, providerError: error instanceof ProviderError, kind: error?.kind }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toMatchObject({ providerError: true });
  });

  it('is taken for stale once a source is newer than it, so a launcher runs the sources instead', () => {
    expect(compiledEntry('services/stack/start.ts').path).toBe(join(compiledDir, 'services/stack/start.js'));
    const built = statSync(stampFile).mtime;
    try {
      utimesSync(stampFile, new Date(0), new Date(0));
      expect(compiledEntry('services/stack/start.ts')).toEqual({ reason: expect.stringContaining('older than the sources') });
    } finally {
      utimesSync(stampFile, built, built);
    }
  });
});
