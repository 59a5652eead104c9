import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedfishClient, type RedfishClient } from '../../../daemon/redfish/index.ts';
import { startVmBmc, type VmBmc } from '../../../daemon/simulator/vm/redfishAdapter.ts';
import { VmSystem } from '../../../daemon/simulator/vm/vmSystem.ts';
import { requireTools } from '../../../scripts/emulatedSite/hostTools.ts';
import { createLogger } from '../../../services/platform/logger.ts';

/**
 * The VM-backed BMC against real QEMU (TCG) through the project's own Redfish client. The VMs have no NIC and empty
 * disks, so SeaBIOS finds nothing to boot and idles: this is about power, boot override, media and inventory.
 */
const scratch = mkdtempSync(join(tmpdir(), 'emusite-vmbmc-'));
const log = createLogger('vm-bmc-test', 'warn');
const systems: VmSystem[] = [];
let bmc: VmBmc;
let media: Server;
let mediaUrl: string;

function vmSystem(id: string): VmSystem {
  const disk = join(scratch, `${id}-disk0.raw`);
  writeFileSync(disk, '');
  truncateSync(disk, 8 << 20);
  const system = new VmSystem({
    id,
    config: {
      name: id,
      uuid: randomUUID(),
      cpus: 1,
      memoryMiB: 128,
      firmware: 'bios',
      nics: [],
      disks: [{ file: disk, serial: `EMU-${id.toUpperCase()}-D0` }],
      runDir: join(scratch, id),
    },
    log,
  });
  systems.push(system);
  return system;
}

const basic = { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` };
const client = (id: string): RedfishClient =>
  createRedfishClient({ baseUrl: `${bmc.url}/redfish/v1/Systems/${id}`, username: 'admin', password: 'pw', auth: 'basic', timeoutMs: 20_000 });

describe('VM-backed BMC', () => {
  beforeAll(async () => {
    requireTools(['qemu-system-x86_64']);
    media = createServer((req, res) => (req.url === '/seed.iso' ? res.end(Buffer.alloc(64 * 1024, 0x43)) : res.writeHead(404).end()));
    await new Promise<void>((ok) => media.listen(0, '127.0.0.1', () => ok()));
    mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}/seed.iso`;
    for (const id of ['vm1', 'vm2']) await vmSystem(id).refreshDiskSizes();
    bmc = await startVmBmc({ systems, username: 'admin', password: 'pw' });
  });

  afterAll(async () => {
    await Promise.all(systems.map((s) => s.close()));
    await bmc?.close();
    media?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('serves one system per VM, each with its own UUID, disk serial and size', async () => {
    const [one, two] = await Promise.all([client('vm1').getInventory(), client('vm2').getInventory()]);
    expect(one.productUuid).toBe(systems[0]!.inventory().uuid);
    expect(two.productUuid).toBe(systems[1]!.inventory().uuid);
    expect(one.disks).toEqual([expect.objectContaining({ serial: 'EMU-VM1-D0', sizeBytes: 8 << 20 })]);
    expect(one.memoryMiB).toBe(128);
  });

  it('powers a VM on and off through Reset, with PowerState read from QEMU', async () => {
    const redfish = client('vm1');
    expect(await redfish.getPowerState()).toBe('Off');
    await redfish.setPower('on');
    expect(await redfish.getPowerState()).toBe('On');
    expect(await systems[0]!.vm.status()).toBe('running');
    await redfish.setPower('off');
    expect(await redfish.getPowerState()).toBe('Off');
    expect(systems[0]!.vm.running).toBe(false);
  });

  it('regression (a deployed VM booted twice): a power cycle of a running VM shows its reset and is never followed by ForceOff + On', async () => {
    const system = systems[0]!;
    const redfish = createRedfishClient({
      baseUrl: bmc.systemUrl('vm1'),
      username: 'admin',
      password: 'pw',
      auth: 'basic',
      timeoutMs: 20_000,
      timing: { pollIntervalMs: 100, resetObserveMs: 15_000 },
    });
    await redfish.setPower('on');
    const systemDoc = async () => (await (await fetch(bmc.systemUrl('vm1'), { headers: basic })).json()) as Record<string, any>;
    const before = await systemDoc();
    const resets: string[] = [];
    const reset = system.reset.bind(system);
    system.reset = async (type) => (resets.push(type), reset(type));
    try {
      expect(await redfish.setPower('cycle')).toMatchObject({ before: 'On', after: 'On', resetTypes: ['PowerCycle'], observed: 'resetEvidence' });
      expect(resets).toEqual(['PowerCycle']);
      const after = await systemDoc();
      expect(Date.parse(after.LastResetTime)).toBeGreaterThan(Date.parse(before.LastResetTime));
      expect(after.BootProgress).toEqual({ LastState: 'PrimaryProcessorInitializationStarted', LastStateTime: after.LastResetTime });
    } finally {
      system.reset = reset;
      await redfish.setPower('off');
    }
    expect((await systemDoc()).BootProgress).toMatchObject({ LastState: 'None' });
  });

  it('spends a Once boot override at the next power-on and keeps a Continuous one', async () => {
    const system = systems[1]!;
    await client('vm2').setOneTimeBoot('Pxe');
    expect(system.bootOverride()).toEqual({ target: 'Pxe', enabled: 'Once' });
    await system.reset('On');
    expect(system.bootOverride().enabled).toBe('Disabled');
    system.setBootOverride({ target: 'Hdd', enabled: 'Continuous' });
    await system.reset('ForceRestart');
    expect(system.bootOverride()).toEqual({ target: 'Hdd', enabled: 'Continuous' });
    await system.reset('ForceOff');
  });

  it('refuses a Reset that makes no sense in the current state, with a Redfish error', async () => {
    const res = await fetch(`${bmc.systemUrl('vm1')}/Actions/ComputerSystem.Reset`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ResetType: 'ForceOff' }),
    });
    expect(res.status).toBe(409);
    expect((await fetch(bmc.systemUrl('vm1'))).status).toBe(401);
  });

  it("fetches InsertMedia images itself and changes the running VM's CD", async () => {
    const system = systems[0]!;
    await system.reset('On');
    await client('vm1').insertMedia(mediaUrl);
    expect(system.media()).toEqual({ image: mediaUrl, inserted: true });
    const blocks = await system.vm.qmp!.execute<{ device: string; qdev?: string; inserted?: { file: string } }[]>('query-block');
    expect(blocks.find((b) => b.qdev?.includes('cd0'))?.inserted?.file).toMatch(/vm1\.media\.iso$/);
    await client('vm1').ejectMedia();
    const after = await system.vm.qmp!.execute<{ qdev?: string; inserted?: unknown }[]>('query-block');
    expect(after.find((b) => b.qdev?.includes('cd0'))?.inserted).toBeUndefined();
    await system.reset('ForceOff');
  });

  it('fetches images up to the default 4 GiB limit (regression: 4 << 30 overflowed to a 0-byte limit) and no larger than a set one', async () => {
    const small = new VmSystem({ ...systems[1]!.options, id: 'vm3', config: { ...systems[1]!.options.config, name: 'vm3' }, maxMediaBytes: 1000 });
    await expect(small.insertMedia(mediaUrl)).rejects.toMatchObject({ code: 'MEDIA_UNAVAILABLE' });
    expect(small.media().inserted).toBe(false);
    await systems[1]!.insertMedia(mediaUrl);
    expect(systems[1]!.media().inserted).toBe(true);
    await systems[1]!.ejectMedia();
  });
});
