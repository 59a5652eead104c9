import fc from 'fast-check';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { SiteEvent } from '../../schemas/site/events.ts';
import { CIDRS, NODE_IDS, SITE_IDS } from './backbone.ts';

/** Enroll, maintenance and label events, valid by schema, in any order and for any of the small set of node ids. */
export const metalEventArb: fc.Arbitrary<MetalEvent> = fc.oneof(
  fc.record({
    type: fc.constant('NodeEnrolled' as const),
    data: fc.record({
      nodeId: fc.constantFrom(...NODE_IDS),
      siteId: fc.constantFrom(...SITE_IDS),
      bmc: fc.record({ address: fc.string(), credentialsRef: fc.string() }),
      hardwareProfile: fc.string(),
      macs: fc.array(fc.string(), { maxLength: 3 }),
    }),
  }),
  fc.record({
    type: fc.constant('NodeMaintenanceSet' as const),
    data: fc.record({
      nodeId: fc.constantFrom(...NODE_IDS),
      on: fc.boolean(),
      reason: fc.option(fc.string(), { nil: null }),
      source: fc.constantFrom('operator' as const, 'bmc' as const),
    }),
  }),
  fc.record({
    type: fc.constant('NodeLabelsSet' as const),
    data: fc.record({ nodeId: fc.constantFrom(...NODE_IDS), labels: fc.dictionary(fc.constantFrom('zone', 'rack'), fc.constantFrom('a', 'b')) }),
  }),
);

const operationArb = fc.constantFrom('inspect' as const, 'deploy' as const, 'release' as const, 'rescue' as const);
const nodeIdArb = fc.constantFrom(...NODE_IDS);
const workflowIdArb = fc.constantFrom('wf-1', 'wf-2');
const inventoryArb = fc.record({
  manufacturer: fc.option(fc.string(), { nil: null }),
  model: fc.option(fc.string(), { nil: null }),
  serial: fc.option(fc.string(), { nil: null }),
  productUuid: fc.option(fc.constant('4c4c4544-0042-3010-8057-b4c04f4e4c32'), { nil: null }),
  cpus: fc.record({ count: fc.nat(256), model: fc.option(fc.string(), { nil: null }), cores: fc.option(fc.nat(128), { nil: null }) }),
  memoryMiB: fc.option(fc.nat(), { nil: null }),
  disks: fc.array(
    fc.record({ id: fc.constantFrom('d0', 'd1'), sizeBytes: fc.option(fc.nat(), { nil: null }), model: fc.constant(null), serial: fc.constant(null) }),
    {
      maxLength: 2,
    },
  ),
  nics: fc.array(fc.record({ id: fc.constantFrom('nic0', 'nic1'), mac: fc.constant('52:54:00:aa:bb:01') }), { maxLength: 2 }),
});

const inBandInventoryArb = fc.record({
  disks: fc.array(
    fc.record({
      name: fc.constantFrom('sda', 'nvme0n1'),
      sizeBytes: fc.nat(),
      serial: fc.option(fc.string(), { nil: null }),
      model: fc.option(fc.string(), { nil: null }),
      rotational: fc.option(fc.boolean(), { nil: null }),
      removable: fc.boolean(),
    }),
    { maxLength: 2 },
  ),
  nics: fc.array(
    fc.record({
      name: fc.constant('eno1'),
      mac: fc.constant('52:54:00:aa:bb:01'),
      link: fc.constantFrom('up', 'down'),
      speedMbps: fc.option(fc.nat(), { nil: null }),
    }),
    { maxLength: 2 },
  ),
  cpus: fc.record({
    logical: fc.integer({ min: 1, max: 256 }),
    sockets: fc.integer({ min: 1, max: 4 }),
    cores: fc.option(fc.integer({ min: 1, max: 128 }), { nil: null }),
    model: fc.option(fc.string(), { nil: null }),
  }),
  memoryMiB: fc.integer({ min: 1, max: 1 << 22 }),
});
const inventoryFindingArb = fc.record({
  code: fc.constantFrom('DISK_NOT_REPORTED_BY_BMC' as const, 'MEMORY_MISMATCH' as const),
  subject: fc.string({ maxLength: 20 }),
  detail: fc.string({ maxLength: 40 }),
});

/** The operation lifecycle events (requested, wiping, completed, failed, cancelled, inventory, rescue ended, retired). */
export const nodeLifecycleEventArb: fc.Arbitrary<MetalEvent> = fc.oneof(
  fc.record({
    type: fc.constant('NodeOperationRequested' as const),
    data: fc.record({
      nodeId: nodeIdArb,
      siteId: fc.constantFrom(...SITE_IDS),
      operation: operationArb,
      workflowId: workflowIdArb,
      inputs: fc.dictionary(fc.constantFrom('image', 'profile'), fc.string()),
    }),
  }),
  fc.record({ type: fc.constant('NodeWipeStarted' as const), data: fc.record({ nodeId: nodeIdArb, workflowId: workflowIdArb }) }),
  fc.record({
    type: fc.constant('NodeOperationCompleted' as const),
    data: fc.record({ nodeId: nodeIdArb, operation: operationArb, workflowId: workflowIdArb }),
  }),
  fc.record({
    type: fc.constant('NodeOperationFailed' as const),
    data: fc.record({
      nodeId: nodeIdArb,
      operation: operationArb,
      workflowId: workflowIdArb,
      reason: fc.string(),
      failedStep: fc.option(fc.string(), { nil: null }),
      maintenance: fc.boolean(),
    }),
  }),
  fc.record({
    type: fc.constant('NodeInventoryRecorded' as const),
    data: fc.record(
      {
        nodeId: nodeIdArb,
        workflowId: workflowIdArb,
        inventory: inventoryArb,
        inBand: inBandInventoryArb,
        findings: fc.array(inventoryFindingArb, { maxLength: 2 }),
      },
      { requiredKeys: ['nodeId', 'workflowId', 'inventory'] },
    ),
  }),
  fc.record({ type: fc.constant('NodeRescueEnded' as const), data: fc.record({ nodeId: nodeIdArb }) }),
  fc.record({ type: fc.constant('NodeRetired' as const), data: fc.record({ nodeId: nodeIdArb }) }),
  fc.record({
    type: fc.constant('NodeReleaseUnverified' as const),
    data: fc.record({ nodeId: nodeIdArb, workflowId: workflowIdArb, poolId: fc.constant('pool-1') }),
  }),
  fc.record({
    type: fc.constant('NodeCancelRequested' as const),
    data: fc.record({ nodeId: nodeIdArb, operation: operationArb, workflowId: workflowIdArb, reason: fc.string() }),
  }),
  fc.record({
    type: fc.constant('NodeOperationCancelled' as const),
    data: fc.record({
      nodeId: nodeIdArb,
      operation: operationArb,
      workflowId: workflowIdArb,
      reason: fc.string(),
      state: fc.constantFrom('ready' as const, 'deployed' as const),
    }),
  }),
);

/** Any node event the catalog declares. */
export const anyNodeEventArb: fc.Arbitrary<MetalEvent> = fc.oneof(metalEventArb, nodeLifecycleEventArb);

export const siteEventArb: fc.Arbitrary<SiteEvent> = fc.record({
  type: fc.constant('SiteCreated' as const),
  data: fc.record({ siteId: fc.constantFrom(...SITE_IDS), name: fc.string(), provisioningCidrs: fc.subarray([...CIDRS]) }),
});
