import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BcxPluginHost } from '../../daemon/bcx/bcxPluginHost.ts';
import { readPluginPins } from '../../daemon/bcx/pluginPins.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';

const log = createLogger('bcx-test', 'silent');
const hosts: BcxPluginHost[] = [];
let plugins: Awaited<ReturnType<typeof bcxPluginFolder>>;

async function hostOf(id: string) {
  const pinned = (await readPluginPins(plugins.folder)).plugins.find((p) => p.pin.id === id)!;
  const host = new BcxPluginHost(pinned, { stateRoot: plugins.stateRoot, log, restartDelayMs: 50 });
  hosts.push(host);
  return host;
}

beforeAll(async () => {
  plugins = await bcxPluginFolder();
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  plugins[Symbol.dispose]();
});

describe('bcx plugin host', () => {
  it('starts a pinned plugin in its sandbox, takes its hello, and relays list, apply and remove with their answers', async () => {
    plugins.pin('memory-runtime');
    const host = await hostOf('memory-runtime');
    await host.start();
    expect(host.manifest).toEqual({ id: 'memory-runtime', version: '1.2.3', kinds: ['runtime'] });
    await expect(host.invoke('apply', [{ id: 'i-1', desiredState: 'running', userData: '#cloud-config' }])).resolves.toEqual({
      id: 'i-1',
      state: 'running',
      addresses: ['10.0.0.2'],
    });
    await expect(host.invoke('list', [])).resolves.toEqual([{ id: 'i-1', state: 'running', addresses: ['10.0.0.2'] }]);
    await expect(host.invoke('apply', [{ id: 'i-2', desiredState: 'running', fail: true }])).rejects.toMatchObject({ code: 'SPEC_REFUSED' });
    await expect(host.invoke('resize', [])).rejects.toMatchObject({ code: 'UNKNOWN_OPERATION' });
    await expect(host.invoke('remove', ['i-1'])).resolves.toBeNull();
    await expect(host.invoke('list', [])).resolves.toEqual([]);
  });

  it('fails a call in flight when the plugin dies, restarts it, and serves again', async () => {
    plugins.pin('crashing-runtime', ['--id', 'crashing-runtime']);
    const host = await hostOf('crashing-runtime');
    await host.start();
    await expect(host.invoke('apply', [{ id: 'i-1', desiredState: 'crash' }])).rejects.toMatchObject({ code: 'PLUGIN_EXITED' });
    await expect.poll(() => host.ready, { timeout: 10_000 }).toBe(true);
    expect(host.starts).toBe(2);
    await expect(host.invoke('list', [])).resolves.toEqual([]);
  });

  it('does not start a plugin whose program differs from its pin', async () => {
    plugins.pin('memory-runtime', [], 'a'.repeat(64));
    const host = await hostOf('memory-runtime');
    await expect(host.start()).rejects.toMatchObject({ code: 'PLUGIN_PIN_MISMATCH' });
    expect(host.starts).toBe(0);
  });

  it('stops a plugin whose hello names another plugin, or that writes anything but frames', async () => {
    plugins.pin('impostor', ['--id', 'memory-runtime']);
    await expect((await hostOf('impostor')).start()).rejects.toMatchObject({ code: 'PLUGIN_HELLO_REFUSED' });
    plugins.pin('noisy', ['--id', 'noisy', '--garbage']);
    await expect((await hostOf('noisy')).start()).rejects.toMatchObject({ code: 'PLUGIN_PROTOCOL_ERROR' });
  });

  it('lists a folder whose pin does not parse or names another id, and still reads the others', async () => {
    plugins.pin('memory-runtime');
    mkdirSync(join(plugins.folder, 'broken'), { recursive: true });
    writeFileSync(join(plugins.folder, 'broken', 'bcx-plugin.json'), JSON.stringify({ id: 'other', program: '../../etc/passwd', sha256: 'x' }));
    const { plugins: read, unusable } = await readPluginPins(plugins.folder);
    expect(read.map((p) => p.pin.id)).toContain('memory-runtime');
    expect(unusable).toEqual([expect.objectContaining({ folder: join(plugins.folder, 'broken'), code: 'PLUGIN_PIN_INVALID' })]);
  });
});
