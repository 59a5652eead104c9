import { describe, expect, it } from 'vitest';

import { Inventory } from '../../daemon/redfish/index.ts';
import { clientFor, simulate, trees, writes } from './harness.ts';

/** Expected values, copied by hand from the fixture JSON files named in the comments. */
const expected = {
  'dmtf-public-tower': {
    // Systems/437XR1238R2/index.json
    manufacturer: 'Contoso',
    model: '3500',
    serial: '437XR1238R2',
    productUuid: '38947555-7742-3448-3784-823347823834',
    // Processors/CPU1..CPU8 (16 cores each); GPU1/GPU2 are not CPUs
    cpus: { count: 8, model: 'Intel(R) Xeon(R) Gold 5218 2.3GHz', cores: 128 },
    // MemorySummary.TotalSystemMemoryGiB = 1024
    memoryMiB: 1024 * 1024,
    // EthernetInterfaces/Network1 and Network2 (IPv4Addresses[].Address: their DHCP leases)
    nics: [
      { id: '1', mac: 'fb:aa:1d:4e:d0:7a', speedMbps: 10000, ipv4Addresses: ['10.0.0.50'] },
      { id: '2', mac: 'fb:aa:1d:4e:d0:7c', speedMbps: 10000, ipv4Addresses: ['10.40.0.50'] },
    ],
    // Storage/*/Drives -> Chassis/Tower/Drives: 18 linked, 8 of them Status.State Absent
    diskCount: 10,
    sampleDisk: { id: 'Disk-1-0', sizeBytes: 20266198323167230, model: 'SAS 18000', serial: null },
  },
  'hpe-ilo5-dl325': {
    // Systems/1/index.json
    manufacturer: 'HPE',
    model: 'ProLiant DL325 Gen10 Plus',
    serial: 'MXQ019020B',
    productUuid: '36383150-3630-584d-5130-313930323042',
    // Processors/1: Model padded with blanks in the tree, TotalCores 16
    cpus: { count: 1, model: 'AMD EPYC 7302P 16-Core Processor', cores: 16 },
    // MemorySummary.TotalSystemMemoryGiB = 64
    memoryMiB: 64 * 1024,
    // EthernetInterfaces/1..4 (SpeedMbps null on 2 and 4; IPv4Addresses 'N/A' or empty: none)
    nics: [
      { id: '1', mac: '94:40:c9:5c:86:bc', speedMbps: 25000 },
      { id: '2', mac: '94:40:c9:5c:86:bd' },
      { id: '3', mac: '14:02:ec:d9:3a:a0', speedMbps: 25000 },
      { id: '4', mac: '14:02:ec:d9:3a:a1' },
    ],
    // Storage collection is empty (RAID is OEM SmartStorage only)
    diskCount: 0,
    sampleDisk: undefined,
  },
} as const;

describe.each(trees)('inventory on $tree', (facts) => {
  const want = expected[facts.tree];

  it('reads identity, CPUs, memory, disks and NICs by following links', async () => {
    const sim = await simulate(facts.tree);
    const inventory = await clientFor(sim).getInventory();
    expect(Inventory.safeParse(inventory).success).toBe(true);
    expect(inventory).toMatchObject({
      manufacturer: want.manufacturer,
      model: want.model,
      serial: want.serial,
      productUuid: want.productUuid,
      cpus: want.cpus,
      memoryMiB: want.memoryMiB,
    });
    expect(inventory.nics).toEqual(want.nics);
    expect(inventory.disks).toHaveLength(want.diskCount);
    if (want.sampleDisk) expect(inventory.disks).toContainEqual(want.sampleDisk);
    expect(writes(sim)).toEqual([]);
  });

  it('tolerates a system without Processors, Memory, Storage and NIC links', async () => {
    const sim = await simulate(facts.tree, {
      systemOverrides: { Processors: undefined, Storage: undefined, EthernetInterfaces: undefined, MemorySummary: undefined, Memory: undefined },
    });
    const inventory = await clientFor(sim).getInventory();
    expect(inventory.serial).toBe(want.serial);
    expect(inventory.cpus.count).toBe(want.cpus.count); // from ProcessorSummary
    expect(inventory.memoryMiB).toBeNull();
    expect(inventory.disks).toEqual([]);
    expect(inventory.nics).toEqual([]);
  });
});
