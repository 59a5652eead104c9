import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPluginPins, sha256OfFile } from '../../daemon/bcx/pluginPins.ts';
import { CrunRuntimeConfig } from '../../plugins/crun-runtime/config.ts';
import { CRUN_PLUGINS_DIR, installContainerRuntime } from '../../scripts/emulatedSite/containerRuntime.ts';
import { tempDir } from '../support/natsServer.ts';

// What build:image puts on the host for the crun runtime, checked without building (or booting) the whole image.
describe("the emulated site host image's container runtime", () => {
  it('carries a crun that runs from the image root, a pinned runtime plugin, its config and a busybox image', async () => {
    using dir = tempDir('bc-image-crun-');
    const rootfs = dir.path;
    const { crunFiles, pluginSha256 } = await installContainerRuntime(rootfs, '/bin/busybox');
    expect(crunFiles[0]).toBe('/usr/bin/crun');
    // Its libraries are where its loader looks inside the image: it runs chrooted there (with the /proc init mounts,
    // which crun re-executes itself through), in a mount namespace of its own.
    mkdirSync(join(rootfs, 'proc'));
    const crunInImage = `mount -t proc proc ${rootfs}/proc && exec chroot ${rootfs} /usr/bin/crun --version`;
    expect(execFileSync('unshare', ['-m', 'sh', '-c', crunInImage], { encoding: 'utf8' })).toMatch(/^crun version /);

    const { plugins, unusable } = await readPluginPins(join(rootfs, CRUN_PLUGINS_DIR));
    expect(unusable).toEqual([]);
    expect(plugins.map((p) => p.pin)).toEqual([
      {
        id: 'crun',
        program: 'plugin.mjs',
        interpreter: '/usr/bin/node',
        args: ['--config', '/etc/bc/crun-runtime.json', '--id', 'crun'],
        sha256: pluginSha256,
      },
    ]);
    expect(await sha256OfFile(plugins[0]!.program)).toBe(pluginSha256);

    const config = CrunRuntimeConfig.parse(JSON.parse(readFileSync(join(rootfs, 'etc/bc/crun-runtime.json'), 'utf8')));
    expect(config.limits).toBe('flavor');
    const image = config.images.busybox!;
    expect(execFileSync('chroot', [join(rootfs, image.rootfs), '/bin/sh', '-c', 'echo from the image'], { encoding: 'utf8' })).toBe('from the image\n');
  }, 60_000);
});
