import { openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/freePort.ts';
import { startImageServer } from '../support/imageServer.ts';
import { tempDir } from '../support/natsServer.ts';
import { startStackProcess } from '../support/stackProcess.ts';

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
const post = (api: string, name: string, body: unknown) =>
  fetch(`${api}/v1/commands/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function readPrefix(path: string, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, 0);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

describe('metal lifecycle on npm start with the simulated site', () => {
  it('carries a machine enrolled → ready → deployed → ready, unattended, with the image on disk and an attested wipe', { timeout: 240_000 }, async () => {
    using dir = tempDir();
    await using image = await startImageServer();
    await using stack = await startStackProcess(
      { BC_DATA_DIR: dir.path, BC_NATS_EMBEDDED: 'true', BC_SIM_MACHINES: '1', BC_SIM_BMC_PORT_BASE: '0' },
      await freePort(),
    );
    const nodeId = 'sim-m001';
    const node = () => json(fetch(`${stack.api}/v1/nodes/${nodeId}`));
    await expect.poll(async () => (await node()).state, { timeout: 60_000, interval: 250 }).toBe('ready');
    expect((await node()).inventory).toMatchObject({ productUuid: expect.any(String), nics: expect.any(Array) });

    const deploy = await post(stack.api, 'metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host', sshKeys: ['ssh-ed25519 AAAA test'] });
    expect(deploy.status).toBe(201);
    await expect.poll(async () => (await node()).state, { timeout: 60_000, interval: 250 }).toBe('deployed');
    const disk = join(dir.path, 'sim', 'sim', 'machines', nodeId, 'disk0.img');
    expect(readPrefix(disk, image.image.length).equals(image.image)).toBe(true);

    expect((await post(stack.api, 'metal.undeploy', { nodeId })).status).toBe(201);
    await expect.poll(async () => (await node()).state, { timeout: 60_000, interval: 250 }).toBe('ready');
    expect(readPrefix(disk, image.image.length).equals(Buffer.alloc(image.image.length))).toBe(true);

    const history = await json(fetch(`${stack.api}/v1/nodes/${nodeId}/workflows`));
    const release = history.items.find((w: { operation: string }) => w.operation === 'release');
    const workflow = await json(fetch(`${stack.api}/v1/workflows/${release.workflowId}`));
    const wipes = workflow.steps.filter((s: { stepId: string }) => s.stepId === 'disk.wipe');
    expect(wipes).toHaveLength(1);
    expect(wipes[0]).toMatchObject({ state: 'succeeded', output: { attested: true } });
  });
});
