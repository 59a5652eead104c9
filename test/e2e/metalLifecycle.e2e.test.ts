import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/freePort.ts';
import { startImageServer } from '../support/imageServer.ts';
import { tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';
import { readPrefix } from '../support/diskFile.ts';
import { readNoCloudFile } from '../support/noCloudSeedOnDisk.ts';

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

const cliBin = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));
const cli = async (api: string, token: string, ...args: string[]) =>
  (await promisify(execFile)(process.execPath, [cliBin, '--api', api, '--token', token, ...args])).stdout;

describe('metal lifecycle on npm start with the simulated site', () => {
  it(
    'carries a machine enrolled → ready → deployed → ready → rescue → ready → retired, unattended, with the image on disk and attested wipes',
    { timeout: 300_000 },
    async () => {
      using dir = tempDir();
      await using image = await startImageServer(undefined, { partitioned: true });
      await using stack = await startStackProcess({ BC_DATA_DIR: dir.path, BC_SIM_MACHINES: '1', BC_SIM_BMC_PORT_BASE: '0' }, await freePort());
      const auth = { headers: { authorization: `Bearer ${stack.token}` } };
      const nodeId = 'sim-m001';
      const node = () => json(fetch(`${stack.api}/v1/nodes/${nodeId}`, auth));
      await expect.poll(async () => (await node()).state, { timeout: 60_000, interval: 250 }).toBe('ready');
      expect((await node()).inventory).toMatchObject({ productUuid: expect.any(String), nics: expect.any(Array) });

      const deployed = await cli(
        stack.api,
        stack.token,
        'metal',
        'deploy',
        nodeId,
        '--image',
        image.url,
        '--sha256',
        image.sha256,
        '--ssh-key',
        'ssh-ed25519 AAAA test',
        '--wait',
      );
      expect(deployed).toMatch(/image\.write\s+node\s+succeeded/);
      expect(deployed).toMatch(/^deploy completed/m);
      expect(await node()).toMatchObject({ state: 'deployed', role: 'host' });
      const disk = join(dir.path, 'sim', 'sim', 'machines', nodeId, 'disk0.img');
      expect(image.isOn(readPrefix(disk, image.image.length))).toBe(true);
      // The key given with --ssh-key is on the disk, in the NoCloud seed the host's cloud-init reads at first boot.
      expect(readNoCloudFile(disk, 'user-data')).toContain('ssh-ed25519 AAAA test');

      const released = await cli(stack.api, stack.token, 'metal', 'release', nodeId, '--wait');
      expect(released).toMatch(/disk\.wipe\s+node\s+succeeded .*destructive \(attested\)/);
      await expect.poll(async () => (await node()).state, { timeout: 10_000, interval: 250 }).toBe('ready');
      expect(await cli(stack.api, stack.token, 'nodes', 'show', nodeId)).toMatch(/release\s+completed/);
      expect(readPrefix(disk, image.image.length).equals(Buffer.alloc(image.image.length))).toBe(true);

      const history = await json(fetch(`${stack.api}/v1/nodes/${nodeId}/workflows`, auth));
      const release = history.items.find((w: { operation: string }) => w.operation === 'release');
      const workflow = await json(fetch(`${stack.api}/v1/workflows/${release.workflowId}`, auth));
      const wipes = workflow.steps.filter((s: { stepId: string }) => s.stepId === 'disk.wipe');
      expect(wipes).toHaveLength(1);
      expect(wipes[0]).toMatchObject({
        state: 'succeeded',
        output: { attested: true, method: 'zero', disks: [{ path: disk, sizeBytes: 64 << 20, verifiedBytes: 64 << 20 }] },
      });

      // Rescue boots the ramdisk (its agent connects); unrescue returns the node to where it was.
      const rescued = await cli(stack.api, stack.token, 'metal', 'rescue', nodeId, '--wait');
      expect(rescued).toMatch(/^rescue completed/m);
      expect(await node()).toMatchObject({ state: 'rescue', connected: true });
      expect(await cli(stack.api, stack.token, 'metal', 'unrescue', nodeId)).toMatch(/metal\.unrescue accepted/);
      await expect.poll(async () => (await node()).state, { timeout: 10_000, interval: 250 }).toBe('ready');

      // Whatever is on the disk when the machine is retired, it leaves the fleet wiped and powered off.
      writeFileSync(disk, Buffer.alloc(1 << 20, 0xab), { flag: 'r+' });
      const retired = await cli(stack.api, stack.token, 'metal', 'retire', nodeId, '--wait');
      expect(retired).toMatch(/^retire completed/m);
      expect(retired).toMatch(/disk\.wipe\s+node\s+succeeded .*destructive \(attested\)/);
      expect(retired).toMatch(/4\. boot\.clear\s+site\s+succeeded/);
      expect(retired).toMatch(/5\. power\.set\s+site\s+succeeded/);
      expect(await node()).toMatchObject({ state: 'retired', connected: false, schedulable: false, role: null });
      expect(readPrefix(disk, 1 << 20).equals(Buffer.alloc(1 << 20))).toBe(true);
      const refused = await fetch(`${stack.api}/v1/commands/metal.rescue`, {
        method: 'POST',
        headers: { ...auth.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ nodeId }),
      });
      expect(refused.status).toBe(409);
    },
  );
});
