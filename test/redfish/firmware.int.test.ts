import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate } from './harness.ts';

const image = 'http://127.0.0.1:9/firmware/bmc.bin';

describe('firmware inventory', () => {
  it('reads the AMI tree’s UpdateService.FirmwareInventory into the inventory', async () => {
    const sim = await simulate('gigabyte-ami-h262');
    // UpdateService/FirmwareInventory/{BMC,MB_CPLD1,BIOS}/index.json
    expect((await clientFor(sim).getInventory()).firmware).toEqual([
      { id: 'BMC', name: 'BMC', version: '12.84.13', updateable: true },
      { id: 'MB_CPLD1', name: 'MB_CPLD1', version: 'ff', updateable: true },
      { id: 'BIOS', name: 'BIOS', version: 'C27', updateable: true },
    ]);
  });

  it('reads the Intel tree’s firmware from SoftwareInventory, where that BMC keeps it', async () => {
    const sim = await simulate('intel-s2600');
    // UpdateService/SoftwareInventory/{BMC,BIOS,ME,SDR,HSBP1}/index.json: every Name is "Software Inventory".
    expect((await clientFor(sim).getInventory()).firmware).toEqual([
      { id: 'BMC', name: 'Software Inventory', version: '1.93.870cf4f0' },
      { id: 'BIOS', name: 'Software Inventory', version: 'SE5C620.86B.02.01.0008.C0001.031920191559' },
      { id: 'ME', name: 'Software Inventory', version: '04.01.04.251' },
      { id: 'SDR', name: 'Software Inventory', version: '1.39 (585433 bytes)' },
      { id: 'HSBP1', name: 'Software Inventory', version: '01.21' },
    ]);
  });

  it('reads the OpenBMC tree’s one BMC image', async () => {
    const sim = await simulate('openbmc-stock');
    expect((await clientFor(sim).getInventory()).firmware).toEqual([
      { id: '5d0869c4', name: 'Software Inventory', version: '2.15.0-dev-686-g100c36de90', updateable: true },
    ]);
  });
});

describe('SimpleUpdate, verified by reading the versions back', () => {
  it('fails with REDFISH_UPDATE_NOT_APPLIED when a BMC without a TaskService answers 204 and no version changes (Intel)', async () => {
    const sim = await simulate('intel-s2600');
    const error = await failureOf(clientFor(sim).simpleUpdate(image));
    expect(isRedfishError(error, 'REDFISH_UPDATE_NOT_APPLIED')).toBe(true);
    expect(requestsTo(sim, 'POST', '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate').map((r) => r.status)).toEqual([204]);
    // The BMC took the image; it just changed nothing.
    expect(sim.state.appliedFirmware).toEqual([image]);
  });

  it('reports the version a 204 did change (Intel)', async () => {
    const sim = await simulate('intel-s2600', {
      firmwareImages: { [image]: { component: '/redfish/v1/UpdateService/SoftwareInventory/BMC', version: '1.94.1a2b3c4d' } },
    });
    expect(await clientFor(sim).simpleUpdate(image)).toEqual({
      taskUri: null,
      messages: [],
      changed: [{ id: 'BMC', from: '1.93.870cf4f0', to: '1.94.1a2b3c4d' }],
    });
  });

  it('follows the AMI BMC’s task to its end, then reports the version it shows', async () => {
    const sim = await simulate('gigabyte-ami-h262', {
      taskDurationMs: 40,
      firmwareImages: { [image]: { component: '/redfish/v1/UpdateService/FirmwareInventory/BMC', version: '12.85.1' } },
    });
    const result = await clientFor(sim).simpleUpdate(image);
    expect(result).toMatchObject({
      taskUri: expect.stringMatching(/^\/redfish\/v1\/TaskService\/Tasks\/\d+$/),
      changed: [{ id: 'BMC', from: '12.84.13', to: '12.85.1' }],
    });
    // The target the tree names (not the guessable UpdateService.SimpleUpdate), TransferProtocol from its ActionInfo.
    expect(requestsTo(sim, 'POST', '/redfish/v1/UpdateService/Actions/SimpleUpdate').map((r) => [r.status, r.body])).toEqual([
      [202, { ImageURI: image, TransferProtocol: 'HTTP' }],
    ]);
  });

  it('takes a completed task without a version change as done: the firmware may apply at the next reset', async () => {
    const sim = await simulate('gigabyte-ami-h262', { taskDurationMs: 20 });
    expect(await clientFor(sim).simpleUpdate(image)).toMatchObject({ changed: [] });
  });

  it('is refused as REDFISH_UNSUPPORTED where the service has no SimpleUpdate (OpenBMC: HttpPushUri only)', async () => {
    const sim = await simulate('openbmc-stock');
    expect(isRedfishError(await failureOf(clientFor(sim).simpleUpdate(image)), 'REDFISH_UNSUPPORTED')).toBe(true);
  });
});
