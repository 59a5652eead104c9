import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, expect } from 'vitest';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { pluginUserName } from '../../daemon/bcx/sandbox/pluginUser.ts';
import { installQemuMicroVmPlugin, QEMU_MICROVM_ID } from '../../scripts/bcx/qemuMicroVmPlugin.ts';
import { requireTools } from '../../scripts/emulatedSite/hostTools.ts';
import { sharedHostImage } from '../emulatedSite/sharedHostImage.ts';
import { runtimeConformance } from '../support/runtimeConformance.ts';
import { log } from './harness.ts';

/**
 * The QEMU runtime (plugins/qemu-microvm) through the runtime conformance suite, as `bcd node` runs it: installed and
 * pinned by `npm run plugin:qemu-microvm`, sandboxed (its own account, the seccomp filter; TCG needs nothing it
 * withholds), booting the project's own host image (`npm run build:image`, the run's shared build or `BC_HOST_IMAGE`).
 * User data is checked the way the guest met it: the image's console prints the sha256 of the user data cloud-init
 * took from the NoCloud seed, after cloud-init's result (NoCloud from the seed disk, no errors); it must be the digest
 * of what the seed carries.
 */
const READY = 'bc-host: host /sbin/init started';
/** Cloud-init under TCG took 40-60 s on a loaded 2-core machine; the suite gives a case 120 s in all. */
const CLOUD_INIT_MS = 100_000;

let hostImage: string;
beforeAll(async () => {
  requireTools(['qemu-system-x86_64', 'qemu-img', 'mkfs.fat', 'mcopy']);
  hostImage = (await sharedHostImage()).image;
}, 1_800_000);

runtimeConformance(
  'qemu-microvm',
  async () => {
    const root = mkdtempSync('/var/tmp/bc-qemu-');
    chmodSync(root, 0o755);
    // The sandbox has its own /tmp: the image goes where the plugin's account can read it.
    const images = join(root, 'images');
    mkdirSync(images, { mode: 0o755 });
    try {
      linkSync(hostImage, join(images, 'bc-host'));
    } catch {
      copyFileSync(hostImage, join(images, 'bc-host'));
    }
    // Installed as an operator would (npm run plugin:qemu-microvm), run sandboxed: not on the privileged list.
    const pluginsFolder = join(root, 'plugins.d');
    const stateRoot = join(root, 'state');
    await installQemuMicroVmPlugin(pluginsFolder, ['--images', images, '--ready-when', READY, '--stop-grace-ms', '15000']);
    const running = await startPluginsFolder(pluginsFolder, { stateRoot, privileged: new Set(), log });
    const vmDir = (id: string) => join(stateRoot, 'plugins/qemu-microvm/vms', id);
    const program = join(pluginsFolder, 'qemu-microvm/plugin.mjs');

    /** The VM's QEMU, seen from outside: the pid in its pidfile, alive and running this VM (`-name bcx-<id>`). */
    const qemuOf = (id: string): number | null => {
      try {
        const pid = Number(readFileSync(join(vmDir(id), 'qemu.pid'), 'utf8').trim());
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const zombie = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] === 'Z';
        return !zombie && argv.includes(`bcx-${id}`) ? pid : null;
      } catch {
        return null;
      }
    };
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

    return {
      runtime: 'qemu-microvm',
      running,
      // Every start answers once the guest's own /sbin/init ran: seconds after QEMU's process exists under TCG.
      images: { plain: 'bc-host', slow: 'bc-host', error: 'no-such-image' },
      errorMessage: /image no-such-image is not in /,
      addresses: [expect.stringMatching(/^127\.0\.0\.1:\d+$/) as string],
      warmStart: true,
      workload: async (id) => {
        const pid = qemuOf(id);
        return pid === null ? null : String(pid);
      },
      userDataInside: async (id) => {
        for (const until = Date.now() + CLOUD_INIT_MS; Date.now() < until; await sleep(1_000)) {
          let serial = '';
          try {
            serial = readFileSync(join(vmDir(id), 'serial.log'), 'utf8');
          } catch {
            return null;
          }
          const digest = /bc-host: cloud-init user data sha256 ([0-9a-f]{64})/.exec(serial)?.[1];
          if (!digest) continue;
          expect(serial).toMatch(/bc-host: cloud-init result \{.*"datasource": "DataSourceNoCloud \[seed=\/dev\/vdb\]/);
          expect(serial).toMatch(/bc-host: cloud-init result \{.*"errors": \[\]/);
          const seeded = execFileSync('mcopy', ['-i', join(vmDir(id), 'cidata.img'), '::user-data', '-'], {
            encoding: 'utf8',
            env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
          });
          // The guest's digest names what it got; the seed says which text that is.
          return digest === sha256(seeded) ? seeded : `the guest got user data of sha256 ${digest}`;
        }
        return null;
      },
      killWorkload: async (id) => void process.kill(qemuOf(id)!, 'SIGKILL'),
      pluginPid: async () =>
        Number(
          readdirSync('/proc').find((pid) => {
            try {
              return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(program);
            } catch {
              return false;
            }
          }),
        ),
      [Symbol.asyncDispose]: async () => {
        let left: string[] = [];
        try {
          left = readdirSync(join(stateRoot, 'plugins/qemu-microvm/vms'));
        } catch {
          // No VM was ever made.
        }
        for (const id of left) {
          const pid = qemuOf(id);
          if (pid !== null) process.kill(pid, 'SIGKILL');
        }
        // The plugin's account, made at its first start (userdel exits 6 for one never made).
        spawnSync('userdel', [pluginUserName(QEMU_MICROVM_ID)], { stdio: 'ignore' });
        rmSync(root, { recursive: true, force: true });
      },
    };
  },
  { startTimeoutMs: 120_000 },
);
