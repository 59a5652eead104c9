/**
 * `qemu-microvm`: a bcx runtime plugin (walkthrough 4) whose instances are QEMU VMs booting an image of its images
 * folder, the project's own host image first among them (`npm run build:image`: Debian's cloud kernel, busybox, node,
 * cloud-init). Pinned in `bcd node`'s plugins folder with its arguments (see config.ts and docs/bcx.md):
 *
 *   { "id": "qemu-microvm", "program": "plugin.mjs", "interpreter": "/usr/bin/node",
 *     "args": ["--images", "/var/lib/bc-images"], "sha256": "…" }
 *
 * It runs sandboxed like any plugin (TCG needs nothing the sandbox withholds); its VMs live under its state folder.
 */
import { defineRuntime, serveBcxPlugin } from '../sdk/bcx/index.ts';
import { microVmConfig } from './config.ts';
import { microVmRuntime } from './microVmRuntime.ts';

const stateDir = process.env.BCX_STATE_DIR ?? process.cwd();
const config = microVmConfig(process.argv.slice(2));

await serveBcxPlugin(
  defineRuntime({
    manifest: { id: 'qemu-microvm', version: '0.1.0', features: ['warm-start'] },
    ...microVmRuntime(config, stateDir),
  }),
);
