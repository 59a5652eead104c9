import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, simulate, trees, writes } from './harness.ts';

const raidIntegrated = '/redfish/v1/Systems/437XR1238R2/Storage/RAIDIntegrated';

describe.each(trees)('volumes on $tree', (facts) => {
  if (!facts.hasVolumes) {
    it('reports REDFISH_UNSUPPORTED for list, create and delete', async () => {
      const sim = await simulate(facts.tree);
      const client = clientFor(sim);
      for (const attempt of [client.listVolumes(), client.createVolume({ raidType: 'RAID1' }), client.deleteVolume(`${facts.systemUri}/Storage/1/Volumes/1`)]) {
        expect(isRedfishError(await failureOf(attempt), 'REDFISH_UNSUPPORTED')).toBe(true);
      }
      expect(writes(sim)).toEqual([]);
    });
    return;
  }

  it('lists volumes by @odata.id, not by Id', async () => {
    const sim = await simulate(facts.tree);
    const volumes = await clientFor(sim).listVolumes();
    // Volumes/Secondary carries "Id": "Secondary Storage".
    expect(volumes).toContainEqual(
      expect.objectContaining({ uri: `${raidIntegrated}/Volumes/Secondary`, id: 'Secondary Storage', raidType: 'RAID5', storageUri: raidIntegrated }),
    );
    expect(volumes.map((v) => v.uri)).toHaveLength(new Set(volumes.map((v) => v.uri)).size);
  });

  it('creates a RAID1 volume and deletes it again', async () => {
    const sim = await simulate(facts.tree);
    const client = clientFor(sim);
    const before = await client.listVolumes();
    const created = await client.createVolume({
      raidType: 'RAID1',
      name: 'os-mirror',
      storageUri: raidIntegrated,
      driveUris: ['/redfish/v1/Chassis/Tower/Drives/Disk-1-0', '/redfish/v1/Chassis/Tower/Drives/Disk-1-1'],
    });
    expect(created).toMatchObject({ name: 'os-mirror', raidType: 'RAID1', storageUri: raidIntegrated });
    expect(created.uri.startsWith(`${raidIntegrated}/Volumes/`)).toBe(true);
    expect((await client.listVolumes()).map((v) => v.uri)).toContain(created.uri);

    await client.deleteVolume(created.uri);
    expect(await client.listVolumes()).toEqual(before);
    expect(isRedfishError(await failureOf(client.deleteVolume(created.uri)), 'REDFISH_NOT_FOUND')).toBe(true);
  });

  it('refuses a RAID type the chosen controller does not support', async () => {
    const sim = await simulate(facts.tree);
    // NVMeSWRAID's controller lists only RAID0 and RAID1.
    const attempt = clientFor(sim).createVolume({ raidType: 'RAID6', storageUri: `${facts.systemUri}/Storage/NVMeSWRAID` });
    expect(isRedfishError(await failureOf(attempt), 'REDFISH_UNSUPPORTED')).toBe(true);
    expect(writes(sim)).toEqual([]);
  });
});
