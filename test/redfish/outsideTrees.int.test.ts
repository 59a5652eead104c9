import { describe, expect, it } from 'vitest';

import { Inventory, isRedfishError } from '../../daemon/redfish/index.ts';
import type { RedfishTreeName } from '../../daemon/simulator/bmc/index.ts';
import { clientFor, failureOf, simulate, writes } from './harness.ts';

/** What each outside tree holds, copied by hand from its fixture files (named in the comments). */
const outside: {
  tree: Extract<RedfishTreeName, 'gigabyte-ami-h262' | 'intel-s2600' | 'openbmc-stock'>;
  identity: Partial<Inventory>;
  macs: string[];
  /** `BootSourceOverrideMode` after an override in no given mode: the BIOS's, else the BMC's own. */
  mode: string;
  hasCd: boolean;
}[] = [
  {
    // Systems/Self/index.json; EthernetInterfaces 3, 2, 1 (2 and 3 share a MAC); BIOS FBO001 = UEFI
    tree: 'gigabyte-ami-h262',
    identity: { manufacturer: 'GIGABYTE', model: 'H262-Z63-00', serial: 'GJG9NF512A000302', productUuid: 'e9184000-7983-11ec-8000-b42e99bade15' },
    macs: ['b4:2e:99:ba:de:16', 'b4:2e:99:ba:de:15'],
    mode: 'UEFI',
    hasCd: true,
  },
  {
    // Systems/QSBP74100021/index.json; its EthernetInterfaces collection is empty; BIOS BootMode is a number: Legacy kept
    tree: 'intel-s2600',
    identity: { manufacturer: 'Intel Corporation', model: 'S2600BPB', serial: 'QSBP74100021', productUuid: '3504bf7d-ae5b-11e7-ab21-a4bf012890a8' },
    macs: [],
    mode: 'Legacy',
    hasCd: false,
  },
  {
    // Systems/system/index.json: no identity, no EthernetInterfaces, no VirtualMedia anywhere
    tree: 'openbmc-stock',
    identity: { manufacturer: null, model: null, serial: null, productUuid: null },
    macs: [],
    mode: 'UEFI',
    hasCd: false,
  },
];

describe.each(outside)('the client on $tree', (facts) => {
  it('reads the inventory, writing nothing', async () => {
    const sim = await simulate(facts.tree);
    const inventory = await clientFor(sim).getInventory();
    expect(Inventory.parse(inventory)).toMatchObject(facts.identity);
    expect(inventory.nics.map((n) => n.mac)).toEqual(facts.macs);
    expect(writes(sim)).toEqual([]);
  });

  it('boots the network once through a power cycle, then finds the override spent', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 5 });
    const client = clientFor(sim);
    expect(await client.setOneTimeBoot('Pxe')).toMatchObject({ target: 'Pxe', enabled: 'Once', mode: facts.mode });
    expect(await client.setPower('cycle')).toMatchObject({ after: 'On' });
    expect(sim.state.boots.map((b) => b.bootTarget)).toEqual(['Pxe']);
    expect(await client.clearBootOverride()).toMatchObject({ changed: false });
  });

  it(facts.hasCd ? 'mounts and ejects an ISO' : 'refuses virtual media as REDFISH_UNSUPPORTED (the tree has none)', async () => {
    const sim = await simulate(facts.tree);
    const client = clientFor(sim);
    const image = 'http://127.0.0.1:9/images/installer.iso';
    if (!facts.hasCd) {
      expect(isRedfishError(await failureOf(client.insertMedia(image)), 'REDFISH_UNSUPPORTED')).toBe(true);
      return;
    }
    await client.insertMedia(image);
    expect(sim.insertedMedia()).toBe(image);
    expect(await client.ejectMedia()).toMatchObject({ changed: true });
    expect(sim.insertedMedia()).toBeUndefined();
  });
});
