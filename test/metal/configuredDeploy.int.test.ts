import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { startEngine } from './engineFixture.ts';
import { startImageServer } from '../support/imageServer.ts';
import { readPrefix } from '../support/diskFile.ts';

const attributes = (bios: unknown) => (bios as { Attributes: Record<string, unknown> }).Attributes;

describe('the deploy-configured profile on simulated machines', () => {
  it('applies BIOS settings and RAID volumes on the DMTF machine, BIOS on the iLO one, then deploys both', { timeout: 180_000 }, async () => {
    await using engine = await startEngine();
    await using image = await startImageServer(undefined, { partitioned: true });
    const { bus } = engine;
    // m001 serves the DMTF tower tree, m002 the HPE iLO 5 one.
    const site = await startSimulatedSite(
      engine.nc,
      { siteId: 'cf', machines: 2, bmcPortBase: 0, dataDir: join(engine.dataDir, 'sim'), diskSizeBytes: 8 << 20, bmcDelayMs: 10 },
      engine.log,
    );
    const [dmtf, hpe] = site.machines;
    try {
      await Promise.all(['cf-m001', 'cf-m002'].map((n) => engine.waitForNode(n, (s) => s.exists && s.state === 'ready')));
      const deploy = (nodeId: string, inputs: Record<string, string[]>) =>
        bus.execute({
          name: 'metal.deploy',
          payload: {
            nodeId,
            profile: 'deploy-configured',
            imageUrl: image.url,
            imageSha256: image.sha256,
            role: 'worker',
            sshKeys: ['ssh-ed25519 AAAA test'],
            inputs,
          },
          actor: 'test',
        });
      await deploy('cf-m001', {
        biosAttributes: ['ProcTurboMode=Disabled', 'ProcCoreDisable=1'],
        raidCreate: ['os-mirror:RAID1:Disk-1-6,Disk-1-7'],
        raidDelete: ['Secondary Storage'],
      });
      await deploy('cf-m002', { biosAttributes: ['WorkloadProfile=Virtualization-MaxPerformance'] });
      const done = await Promise.all(
        ['cf-m001', 'cf-m002'].map((n) => engine.waitForNode(n, (s) => s.exists && (s.state === 'deployed' || s.state === 'failed'), 150_000)),
      );
      expect(done.map((n) => n.exists && n.state)).toEqual(['deployed', 'deployed']);

      expect(attributes(dmtf!.bmc.resource('/redfish/v1/Systems/437XR1238R2/Bios'))).toMatchObject({ ProcTurboMode: 'Disabled', ProcCoreDisable: 1 });
      const volumes = dmtf!.bmc.resource('/redfish/v1/Systems/437XR1238R2/Storage/RAIDIntegrated/Volumes') as { Members: { '@odata.id': string }[] };
      const names = volumes.Members.map((m) => (dmtf!.bmc.resource(m['@odata.id']) as { Name: string }).Name);
      expect(names).toContain('os-mirror');
      expect(volumes.Members.map((m) => m['@odata.id'])).not.toContain('/redfish/v1/Systems/437XR1238R2/Storage/RAIDIntegrated/Volumes/Secondary');
      expect(attributes(hpe!.bmc.resource('/redfish/v1/systems/1/bios'))).toMatchObject({ WorkloadProfile: 'Virtualization-MaxPerformance' });
      for (const machine of [dmtf!, hpe!]) expect(image.isOn(readPrefix(machine.disks[0]!, image.image.length))).toBe(true);
      // The BIOS reset came before the ramdisk boot: one boot to apply settings, one into the ramdisk, one into the OS.
      expect(dmtf!.bmc.state.boots.map((b) => b.bootTarget)).toEqual(['None', 'Pxe', 'None']);
    } finally {
      await site.stop();
    }
  });
});
