import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, USER, PASSWORD } from './harness.ts';

/**
 * What the client got wrong against the real AMI MegaRAC tree (fixtures/redfish/gigabyte-ami-h262): its CD slot lists
 * no MediaTypes, remote media is an OEM action, a one-time override is kept as Continuous, and the override's mode
 * reads Legacy while the BIOS boots UEFI.
 */
const ami = 'gigabyte-ami-h262';
const systemUri = '/redfish/v1/Systems/Self';
const managerUri = '/redfish/v1/Managers/Self';
const cdUri = '/redfish/v1/Managers/Self/VirtualMedia/CD1';
const enableRMedia = '/redfish/v1/Managers/Self/Actions/Oem/Ami/VirtualMedia.EnableRMedia';
const image = 'http://127.0.0.1:9/images/ramdisk.iso';
const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

const post = (sim: { url: string }, path: string, body: unknown) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { Authorization: basic }, body: JSON.stringify(body) });

/**
 * A second manager in the same Redfish service, for another node, whose one slot is typed CD: a typed slot the
 * H262's own (untyped) slot loses to when every manager's slots are listed together.
 */
const otherManager = '/redfish/v1/Managers/Node2';
const otherCd = `${otherManager}/VirtualMedia/CD1`;
const secondManager = {
  '/redfish/v1/Managers': {
    '@odata.id': '/redfish/v1/Managers',
    Members: [{ '@odata.id': managerUri }, { '@odata.id': otherManager }],
    'Members@odata.count': 2,
  },
  [otherManager]: {
    '@odata.id': otherManager,
    Id: 'Node2',
    ManagerType: 'BMC',
    Links: { ManagerForServers: [{ '@odata.id': '/redfish/v1/Systems/Node2' }] },
    VirtualMedia: { '@odata.id': `${otherManager}/VirtualMedia` },
  },
  [`${otherManager}/VirtualMedia`]: { '@odata.id': `${otherManager}/VirtualMedia`, Members: [{ '@odata.id': otherCd }], 'Members@odata.count': 1 },
  [otherCd]: {
    '@odata.id': otherCd,
    Id: 'CD1',
    MediaTypes: ['CD', 'DVD'],
    Inserted: false,
    Actions: {
      '#VirtualMedia.InsertMedia': { target: `${otherCd}/Actions/VirtualMedia.InsertMedia` },
      '#VirtualMedia.EjectMedia': { target: `${otherCd}/Actions/VirtualMedia.EjectMedia` },
    },
  },
};

describe('virtual media on the AMI tree with another node’s manager in the service', () => {
  it('mounts on the system’s own manager (Links.ManagedBy), never on a CD-typed slot of another manager', async () => {
    const sim = await simulate(ami, { extraResources: secondManager });
    const { mediaUri } = await clientFor(sim).insertMedia(image);
    expect(mediaUri).toBe(cdUri);
    expect(sim.insertedMedia()).toBe(image);
    expect(sim.resource(otherCd)).toMatchObject({ Inserted: false });
    expect(sim.requestLog.filter((r) => r.path.startsWith(otherManager))).toEqual([]);
  });

  it('finds the system’s manager by ManagerForServers when the system names none', async () => {
    const sim = await simulate(ami, { extraResources: secondManager, systemOverrides: { Links: { ManagedBy: undefined } } });
    expect((await clientFor(sim).insertMedia(image)).mediaUri).toBe(cdUri);
    expect(sim.resource(otherCd)).toMatchObject({ Inserted: false });
  });

  it('has no slot to offer when only another system’s manager has one', async () => {
    const withoutMedia = { '@odata.id': managerUri, Id: 'Self', ManagerType: 'BMC', Links: { ManagerForServers: [{ '@odata.id': systemUri }] } };
    const sim = await simulate(ami, { extraResources: { ...secondManager, [managerUri]: withoutMedia } });
    expect(isRedfishError(await failureOf(clientFor(sim).insertMedia(image)), 'REDFISH_UNSUPPORTED')).toBe(true);
    expect(sim.resource(otherCd)).toMatchObject({ Inserted: false });
  });
});

describe('AMI remote media (the manager’s OEM action EnableRMedia)', () => {
  it('lists no slot while remote media is off, switches it on by the action, then mounts', async () => {
    const sim = await simulate(ami, { dialect: 'ami-megarac', mediaDelayMs: 20 });
    expect(sim.resource(`${managerUri}/VirtualMedia`)).toMatchObject({ Members: [], 'Members@odata.count': 0 });
    expect((await clientFor(sim).insertMedia(image)).mediaUri).toBe(cdUri);
    expect(sim.insertedMedia()).toBe(image);
    const writes = sim.requestLog.filter((r) => r.method !== 'GET').map((r) => [r.method, r.path, r.status]);
    // The switch first (its value from the action's ActionInfo), then the Image-only insert AMI takes.
    expect(writes).toEqual([
      ['POST', enableRMedia, 200],
      ['POST', `${cdUri}/Actions/VirtualMedia.InsertMedia`, 400],
      ['POST', `${cdUri}/Actions/VirtualMedia.InsertMedia`, 200],
    ]);
    expect(requestsTo(sim, 'POST', enableRMedia).map((r) => r.body)).toEqual([{ RMediaState: 'Enable' }]);
  });

  it('answers the real action as the tree declares it, and has no RMediaStatus property to PATCH', async () => {
    const sim = await simulate(ami, { dialect: 'ami-megarac' });
    expect(JSON.stringify(sim.resource(managerUri))).not.toContain('RMediaStatus');
    expect((await post(sim, enableRMedia, {})).status).toBe(400);
    expect((await post(sim, enableRMedia, { RMediaState: 'Enabled' })).status).toBe(400);
    const patch = await fetch(`${sim.url}${managerUri}`, {
      method: 'PATCH',
      headers: { Authorization: basic },
      body: JSON.stringify({ Oem: { Ami: { VirtualMedia: { RMediaStatus: 'Enabled' } } } }),
    });
    expect(patch.status).toBe(405);
    expect((await fetch(`${sim.url}${cdUri}`, { headers: { Authorization: basic } })).status).toBe(404);
    expect((await post(sim, enableRMedia, { RMediaState: 'Enable' })).status).toBe(200);
    // The slots come back once the BMC's media service has restarted (a timer, however short): not within the action.
    await expect
      .poll(async () => (await fetch(`${sim.url}${cdUri}`, { headers: { Authorization: basic } })).status, { timeout: 5_000, interval: 20 })
      .toBe(200);
    // Switching it off takes the mounted image out and hides the slot again.
    expect((await clientFor(sim).insertMedia(image)).changed).toBe(true);
    expect((await post(sim, enableRMedia, { RMediaState: 'Disable' })).status).toBe(200);
    expect(sim.insertedMedia()).toBeUndefined();
    expect(sim.resource(`${managerUri}/VirtualMedia`)).toMatchObject({ Members: [] });
  });

  it('has nothing to eject while remote media is off, and switches nothing on for it', async () => {
    const sim = await simulate(ami, { dialect: 'ami-megarac' });
    expect(await clientFor(sim).ejectMedia()).toEqual({ changed: false, mediaUri: null });
    expect(sim.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('leaves remote media alone where the slot already shows', async () => {
    const sim = await simulate(ami);
    await clientFor(sim).insertMedia(image);
    expect(requestsTo(sim, 'POST', enableRMedia)).toEqual([]);
    expect(sim.insertedMedia()).toBe(image);
  });
});

describe('boot overrides on the AMI tree', () => {
  it('ends an override the BMC kept as Continuous, so the next restart boots normally', async () => {
    const sim = await simulate(ami, { dialect: 'ami-megarac', powerDelayMs: 5 });
    const client = clientFor(sim);
    expect(await client.setOneTimeBoot('Pxe')).toMatchObject({ target: 'Pxe', enabled: 'Continuous' });
    await client.setPower('cycle');
    // Continuous: the override survived the boot it was for.
    expect(sim.state.bootOverride).toEqual({ target: 'Pxe', enabled: 'Continuous' });
    expect(await client.clearBootOverride()).toEqual({ changed: true, before: { target: 'Pxe', enabled: 'Continuous' } });
    expect(requestsTo(sim, 'PATCH', systemUri).at(-1)?.body).toEqual({ Boot: { BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None' } });
    await client.setPower('cycle');
    expect(sim.state.boots.map((b) => b.bootTarget)).toEqual(['Pxe', 'None']);
    expect(await client.clearBootOverride()).toMatchObject({ changed: false });
  });

  it('fails with REDFISH_BOOT_OVERRIDE_MISMATCH when the BMC answers 200 and keeps the override armed', async () => {
    const sim = await simulate(ami, {
      dialect: { bootOverride: 'ignored' },
      systemOverrides: { Boot: { BootSourceOverrideEnabled: 'Continuous', BootSourceOverrideTarget: 'Cd' } },
    });
    const error = await failureOf(clientFor(sim, { timing: { bootVerifyMs: 100 } }).clearBootOverride());
    expect(isRedfishError(error, 'REDFISH_BOOT_OVERRIDE_MISMATCH')).toBe(true);
  });

  it('takes the boot mode from the BIOS (FBO001 "Boot mode select": UEFI), not the override’s Legacy', async () => {
    const sim = await simulate(ami);
    expect(sim.resource(systemUri)).toMatchObject({ Boot: { BootSourceOverrideMode: 'Legacy' } });
    expect(await clientFor(sim).setOneTimeBoot('Pxe')).toMatchObject({ target: 'Pxe', mode: 'UEFI' });
    expect(requestsTo(sim, 'PATCH', systemUri).map((r) => r.body)).toEqual([
      { Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'UEFI' } },
    ]);
  });

  it('still boots in the mode the node was enrolled with', async () => {
    const sim = await simulate(ami);
    expect(await clientFor(sim, { bootMode: 'Legacy' }).setOneTimeBoot('Pxe')).toMatchObject({ mode: 'Legacy' });
    expect(requestsTo(sim, 'PATCH', systemUri).map((r) => r.body)).toEqual([{ Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } }]);
  });
});
