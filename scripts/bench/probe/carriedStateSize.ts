/**
 * `npx tsx scripts/bench/probe/carriedStateSize.ts`: how many characters of JSON a node's carried state takes
 * (`Bc-Aggregate-State`, `services/platform/commands/aggregateState.ts`) at each point of its life, for a server with
 * a typical inventory (BMC and in-band) and one with a large one, against the events beside it.
 */
import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { nodeAggregate, type NodeAggregateState } from '../../../services/metal/node/node.ts';
import { MAX_STATE_CHARS } from '../../../services/platform/commands/aggregateState.ts';

function inventoryEvent(disks: number, nics: number, firmware: number): MetalEvent {
  const mac = (i: number) => `52:54:00:12:34:${(16 + i).toString(16)}`;
  return {
    type: 'NodeInventoryRecorded',
    data: {
      nodeId: 'node-0042',
      workflowId: 'wf-0123456789abcdef',
      inventory: {
        manufacturer: 'Dell Inc.',
        model: 'PowerEdge R650',
        serial: 'CN7016345J00B1',
        productUuid: '4c4c4544-0036-3510-8031-b2c04f4e3033',
        cpus: { count: 2, model: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz', cores: 32 },
        memoryMiB: 524_288,
        disks: Array.from({ length: disks }, (_, i) => ({
          id: `Disk.Bay.${i}:Enclosure.Internal.0-1`,
          sizeBytes: 1_920_383_410_176,
          model: 'MZ7L31T9HBLT-00A07',
          serial: `S6ESNE0T${600_000 + i}`,
        })),
        nics: Array.from({ length: nics }, (_, i) => ({ id: `NIC.Integrated.1-${i + 1}-1`, mac: mac(i), speedMbps: 25_000 })),
        firmware: Array.from({ length: firmware }, (_, i) => ({
          id: `Installed-${100 + i}-22.5.7__NIC.Integrated.1-${i}`,
          name: `Component ${i} firmware`,
          version: `22.${i}.7`,
          updateable: true,
        })),
      },
      inBand: {
        disks: Array.from({ length: disks }, (_, i) => ({
          name: `sd${String.fromCharCode(97 + (i % 26))}`,
          sizeBytes: 1_920_383_410_176,
          serial: `S6ESNE0T${600_000 + i}`,
          model: 'MZ7L31T9HBLT',
          rotational: false,
          removable: false,
        })),
        nics: Array.from({ length: nics }, (_, i) => ({ name: `eno${i + 1}`, mac: mac(i), link: 'up', speedMbps: 25_000 })),
        cpus: { logical: 128, sockets: 2, cores: 32, model: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz' },
        memoryMiB: 515_000,
      },
      findings: [],
    },
  };
}

const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: {
    nodeId: 'node-0042',
    siteId: 'dc1',
    bmc: { address: 'https://10.20.30.42', credentialsRef: 'secret:bmc-node-0042' },
    hardwareProfile: 'default',
    macs: ['52:54:00:12:34:56', '52:54:00:12:34:57'],
  },
};
const deploying: MetalEvent = {
  type: 'NodeOperationRequested',
  data: {
    nodeId: 'node-0042',
    siteId: 'dc1',
    operation: 'deploy',
    workflowId: 'wf-fedcba9876543210',
    inputs: {
      imageUrl: 'https://images.example.net/ubuntu-24.04-server-cloudimg-amd64.raw',
      imageSha256: 'a'.repeat(64),
      role: 'web',
      sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG2 ops@example'],
    },
    tenantId: 'tenant-7',
  },
};

for (const [label, disks, nics, firmware] of [
  ['typical server (8 disks, 4 NICs, 25 firmware entries)', 8, 4, 25],
  ['large server (24 disks, 8 NICs, 60 firmware entries)', 24, 8, 60],
] as const) {
  const steps: [string, MetalEvent][] = [
    ['enrolled', enrolled],
    ['inventory recorded', inventoryEvent(disks, nics, firmware)],
    ['deploy requested', deploying],
  ];
  let state: NodeAggregateState = nodeAggregate.initialState;
  console.log(label);
  for (const [step, event] of steps) {
    state = nodeAggregate.evolve(state, event);
    const chars = JSON.stringify(state).length;
    console.log(
      `  ${step}: state ${chars} chars${chars > MAX_STATE_CHARS ? ' (over MAX_STATE_CHARS: not carried)' : ''}, event data ${JSON.stringify(event.data).length}`,
    );
  }
}
