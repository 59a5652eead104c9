import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { InBandInventory } from '../../schemas/metal/inBandInventory.ts';
import type { Inventory } from '../../schemas/metal/inventory.ts';
import { builtinProfileFor } from '../../services/metal/profiles/builtin.ts';
import { inspectNode } from '../../services/metal/node/inspect.ts';
import { startInspection } from '../../services/metal/node/startInspection.ts';
import { inventoryFindings } from '../../services/metal/node/inventoryFindings.ts';
import { workflowIdFor } from '../../services/metal/node/lifecycle.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { recordInventory } from '../../services/metal/node/recordInventory.ts';
import { fakeInventory } from './fakeAgent.ts';
import { deciderSpec } from './spec.ts';

const bmc: Inventory = fakeInventory;
/** `fakeInventory` as its kernel would show it: one socket per BMC processor, MemTotal 3% under the installed memory. */
const inside: InBandInventory = {
  disks: [{ name: 'nvme0n1', sizeBytes: 1_920_383_410_176, serial: 'D1', model: 'FakeDisk', rotational: false, removable: false }],
  nics: [{ name: 'eno1', mac: '52:54:00:aa:bb:01', link: 'up', speedMbps: 25_000 }],
  cpus: { logical: 64, sockets: 2, cores: 32, model: 'Fake CPU' },
  memoryMiB: Math.floor(262_144 * 0.97),
};
const codes = (b: Inventory, i: InBandInventory) => inventoryFindings(b, i).map((f) => [f.code, f.subject]);

describe('inventory findings', () => {
  it('finds nothing where the machine is what its BMC says', () => {
    expect(inventoryFindings(bmc, inside)).toEqual([]);
  });

  it('names a disk the BMC does not report, and one the kernel does not see', () => {
    const extra = { ...inside.disks[0]!, name: 'sda', serial: 'HIDDEN-1', sizeBytes: 4e12, rotational: true };
    expect(codes(bmc, { ...inside, disks: [...inside.disks, extra] })).toEqual([['DISK_NOT_REPORTED_BY_BMC', 'HIDDEN-1']]);
    expect(codes(bmc, { ...inside, disks: [] })).toEqual([['DISK_NOT_SEEN_IN_BAND', 'D1']]);
  });

  it('matches serial-less disks by size, ignores removable media, and flags a size that changed', () => {
    expect(codes(bmc, { ...inside, disks: [{ ...inside.disks[0]!, serial: null }] })).toEqual([]);
    const stick = { ...inside.disks[0]!, name: 'sdz', serial: 'USB', sizeBytes: 8e9, removable: true };
    expect(codes(bmc, { ...inside, disks: [...inside.disks, stick] })).toEqual([]);
    expect(codes(bmc, { ...inside, disks: [{ ...inside.disks[0]!, sizeBytes: 1e12 }] })).toEqual([['DISK_SIZE_MISMATCH', 'D1']]);
  });

  it('compares no disks with a BMC that lists none (iLO behind SmartStorage)', () => {
    expect(codes({ ...bmc, disks: [] }, inside)).toEqual([]);
  });

  it('names MACs seen on one side only', () => {
    const other = { name: 'eno2', mac: '52:54:00:aa:bb:02', link: 'down', speedMbps: null };
    expect(codes(bmc, { ...inside, nics: [other] })).toEqual([
      ['NIC_NOT_REPORTED_BY_BMC', '52:54:00:aa:bb:02'],
      ['NIC_NOT_SEEN_IN_BAND', '52:54:00:aa:bb:01'],
    ]);
  });

  it('accepts a CPU count as sockets, cores or vCPUs, and memory the kernel keeps some of', () => {
    for (const count of [2, 32, 64]) expect(codes({ ...bmc, cpus: { ...bmc.cpus, count } }, inside)).toEqual([]);
    expect(codes({ ...bmc, cpus: { ...bmc.cpus, count: 4 } }, inside)).toEqual([['CPU_COUNT_MISMATCH', 'cpus']]);
    expect(codes(bmc, { ...inside, memoryMiB: 262_144 + 1 })).toEqual([['MEMORY_MISMATCH', 'memory']]);
    expect(codes(bmc, { ...inside, memoryMiB: 131_072 })).toEqual([['MEMORY_MISMATCH', 'memory']]);
  });
});

const n = 'n1';
const given = deciderSpec(nodeAggregate);
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};
const inspected = (workflowId: string): MetalEvent[] => [
  { type: 'NodeOperationRequested', data: { nodeId: n, siteId: 'dc1', operation: 'inspect', workflowId, inputs: {} } },
  { type: 'NodeOperationCompleted', data: { nodeId: n, operation: 'inspect', workflowId } },
];
const ready = [enrolled, ...inspected('wf-00000000000a')];

describe('metal.inspect and in-band inventories', () => {
  it('inspects a ready node in band by default, out of band when asked, and never a deployed one', () => {
    const workflowId = workflowIdFor(n, 'cmd-00000001');
    const request = (inputs: Record<string, unknown>): MetalEvent => ({
      type: 'NodeOperationRequested',
      data: { nodeId: n, siteId: 'dc1', operation: 'inspect', workflowId, inputs },
    });
    given(ready)
      .when(inspectNode, { nodeId: n })
      .then([request({ inBand: true })]);
    given(ready)
      .when(inspectNode, { nodeId: n, inBand: false })
      .then([request({})]);
    const deployed: MetalEvent[] = [
      ...ready,
      { type: 'NodeOperationRequested', data: { nodeId: n, siteId: 'dc1', operation: 'deploy', workflowId: 'wf-00000000000b', inputs: {} } },
      { type: 'NodeOperationCompleted', data: { nodeId: n, operation: 'deploy', workflowId: 'wf-00000000000b' } },
    ];
    given(deployed).when(inspectNode, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
    expect(builtinProfileFor('inspect', { inBand: true }).steps.map((s) => s.id)).toEqual([
      'inventory.read',
      'boot.setOnce',
      'power.set',
      'wait.agentJoined',
      'hardware.probe',
      'boot.clear',
      'power.set',
    ]);
  });

  it('inspects a node enrolled with inspectInBand in band from the start', () => {
    const inBandEnrolled: MetalEvent = { ...enrolled, data: { ...(enrolled.data as object), inspectInBand: true } } as MetalEvent;
    given([inBandEnrolled])
      .when(startInspection, { nodeId: n })
      .then((events) => expect(events[0]!.data).toMatchObject({ operation: 'inspect', inputs: { inBand: true } }));
    given([enrolled])
      .when(startInspection, { nodeId: n })
      .then((events) => expect(events[0]!.data).toMatchObject({ operation: 'inspect', inputs: {} }));
  });

  it('records the in-band inventory with its findings, and a later BMC-only inspection recomputes them', () => {
    const extra = { ...inside.disks[0]!, name: 'sda', serial: 'HIDDEN-1' };
    const withExtra = { ...inside, disks: [...inside.disks, extra] };
    const [recorded] = given(ready)
      .when(recordInventory, { nodeId: n, workflowId: 'wf-00000000000c', inventory: bmc, inBand: withExtra })
      .then((events) => expect(events).toHaveLength(1));
    expect(recorded!.data).toMatchObject({ inBand: withExtra, findings: [{ code: 'DISK_NOT_REPORTED_BY_BMC', subject: 'HIDDEN-1' }] });
    const after = given([...ready, recorded!]);
    expect(after.state).toMatchObject({ inBandInventory: withExtra, inventoryFindings: [{ code: 'DISK_NOT_REPORTED_BY_BMC' }] });
    // The BMC now lists the disk too: the finding goes, and the in-band inventory stays what the ramdisk saw.
    const listed = { ...bmc, disks: [...bmc.disks, { id: 'sda', sizeBytes: extra.sizeBytes, model: null, serial: 'HIDDEN-1' }] };
    after
      .when(recordInventory, { nodeId: n, workflowId: 'wf-00000000000d', inventory: listed })
      .then([{ type: 'NodeInventoryRecorded', data: { nodeId: n, workflowId: 'wf-00000000000d', inventory: listed, findings: [] } }]);
    after.when(recordInventory, { nodeId: n, workflowId: 'wf-00000000000c', inventory: bmc, inBand: withExtra }).then([]);
  });
});
