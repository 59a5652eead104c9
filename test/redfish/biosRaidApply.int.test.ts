import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees, writes } from './harness.ts';

describe.each(trees)('BIOS apply on $tree', (facts) => {
  const { name, current, next } = facts.biosAttribute;

  it('writes pending settings, resets the machine and sees them current after it', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 10 });
    const result = await clientFor(sim).applyBiosSettings({ [name]: next });
    expect(result).toEqual({ changed: true, attributes: { [name]: next }, resetTypes: ['ForceRestart'] });
    expect(sim.state.boots).toHaveLength(1);
    expect(sim.state.biosPending).toEqual({});
    expect(requestsTo(sim, 'PATCH', facts.biosSettingsUri).map((r) => r.body)).toEqual([{ Attributes: { [name]: next } }]);
  });

  it('changes nothing and resets nothing when every attribute already has its value', async () => {
    const sim = await simulate(facts.tree);
    expect(await clientFor(sim).applyBiosSettings({ [name]: current })).toEqual({ changed: false, attributes: { [name]: current }, resetTypes: [] });
    expect(writes(sim)).toEqual([]);
  });

  it('powers an Off machine on to apply them, and off again', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 10, systemOverrides: { PowerState: 'Off' } });
    expect((await clientFor(sim).applyBiosSettings({ [name]: next })).resetTypes).toEqual(['On', 'ForceOff']);
    expect(sim.state.powerState).toBe('Off');
    expect(sim.state.boots).toHaveLength(1);
  });

  it('fails with REDFISH_BIOS_NOT_APPLIED when the firmware drops the settings at the reset', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 10, dialect: { biosSettings: 'dropped' } });
    const error = await failureOf(clientFor(sim, { timing: { powerTimeoutMs: 300 } }).applyBiosSettings({ [name]: next }));
    expect(isRedfishError(error, 'REDFISH_BIOS_NOT_APPLIED')).toBe(true);
    expect((error as Error).message).toContain(name);
  });

  it('refuses unknown attributes before writing or resetting', async () => {
    const sim = await simulate(facts.tree);
    expect(isRedfishError(await failureOf(clientFor(sim).applyBiosSettings({ NoSuchAttribute: 'x' })), 'REDFISH_BAD_REQUEST')).toBe(true);
    expect(writes(sim)).toEqual([]);
  });
});

describe('BIOS apply with Name=Value strings', () => {
  it('converts a string to the type the attribute has on the BMC', async () => {
    // dmtf-public-tower: ProcCoreDisable is a number.
    const sim = await simulate('dmtf-public-tower', { powerDelayMs: 10 });
    const client = clientFor(sim);
    const before = (await client.getBiosAttributes()).ProcCoreDisable;
    expect(typeof before).toBe('number');
    expect((await client.applyBiosSettings({ ProcCoreDisable: String(Number(before) + 1) })).attributes).toEqual({ ProcCoreDisable: Number(before) + 1 });
    expect(isRedfishError(await failureOf(client.applyBiosSettings({ ProcCoreDisable: 'many' })), 'REDFISH_BAD_REQUEST')).toBe(true);
  });
});

describe('RAID apply on dmtf-public-tower', () => {
  const raid = '/redfish/v1/Systems/437XR1238R2/Storage/RAIDIntegrated';

  it('creates a volume on the Storage that lists its drives, and a second apply creates nothing', async () => {
    const sim = await simulate('dmtf-public-tower');
    const client = clientFor(sim);
    const plan = { delete: [], create: [{ name: 'os-mirror', raidType: 'RAID1', drives: ['Disk-1-6', 'Disk-1-7'] }] };
    const first = await client.applyRaid(plan);
    expect(first.created).toEqual([expect.objectContaining({ name: 'os-mirror', raidType: 'RAID1', storageUri: raid })]);
    const volume = sim.resource(first.created[0]!.uri) as { Links: { Drives: unknown[] } };
    expect(volume.Links.Drives).toEqual([
      { '@odata.id': '/redfish/v1/Chassis/Tower/Drives/Disk-1-6' },
      { '@odata.id': '/redfish/v1/Chassis/Tower/Drives/Disk-1-7' },
    ]);
    const again = await client.applyRaid(plan);
    expect(again.created).toEqual([]);
    expect(again.volumes.filter((v) => v.name === 'os-mirror')).toHaveLength(1);
  });

  it('deletes volumes by Id or URI, and skips ones that are gone', async () => {
    const sim = await simulate('dmtf-public-tower');
    const result = await clientFor(sim).applyRaid({ delete: ['Secondary Storage', `${raid}/Volumes/Scratchpad`, 'no-such-volume'], create: [] });
    expect(result.deleted).toEqual([`${raid}/Volumes/Secondary`, `${raid}/Volumes/Scratchpad`]);
    expect(result.volumes.map((v) => v.uri)).not.toContain(`${raid}/Volumes/Secondary`);
  });

  it('refuses a name two volumes share, deleting neither', async () => {
    const sim = await simulate('dmtf-public-tower');
    // The mockup names both Volumes/Secondary and Volumes/Scratchpad "Scratchpad Volume".
    expect(isRedfishError(await failureOf(clientFor(sim).applyRaid({ delete: ['Scratchpad Volume'], create: [] })), 'REDFISH_BAD_REQUEST')).toBe(true);
    expect(writes(sim)).toEqual([]);
  });

  it('refuses drives that no Storage supporting the type lists', async () => {
    const sim = await simulate('dmtf-public-tower');
    const error = await failureOf(clientFor(sim).applyRaid({ delete: [], create: [{ name: 'x', raidType: 'RAID1', drives: ['Disk-9-9'] }] }));
    expect(isRedfishError(error, 'REDFISH_NOT_FOUND')).toBe(true);
    expect(writes(sim)).toEqual([]);
  });
});

describe('RAID apply on hpe-ilo5-dl325', () => {
  it('reports REDFISH_UNSUPPORTED (RAID lives in the OEM SmartStorage tree), and an empty plan touches nothing', async () => {
    const sim = await simulate('hpe-ilo5-dl325');
    const client = clientFor(sim);
    expect(isRedfishError(await failureOf(client.applyRaid({ delete: [], create: [{ name: 'os', raidType: 'RAID1' }] })), 'REDFISH_UNSUPPORTED')).toBe(true);
    const requests = sim.requestLog.length;
    expect(await client.applyRaid({ delete: [], create: [] })).toEqual({ deleted: [], created: [], volumes: [] });
    expect(sim.requestLog).toHaveLength(requests);
  });
});
