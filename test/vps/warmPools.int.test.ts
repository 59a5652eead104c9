import { describe, expect, it } from 'vitest';
import { listInstances, listPools } from '../../projections/vps/queries.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { sendHostCommand } from '../../services/processes/vpsReconciler/metalAccess.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { processAlive } from '../support/processAlive.ts';
import { startMetalStack } from './metalStack.ts';
import { instancePayload, quotaOf } from './vpsPayloads.ts';

describe('warm pools on our own metal: a real nats-server, the VPS reconciler and a host running bcd node with a warm-start runtime', () => {
  it('keeps N slots ready, hands one to a create that runs with its user data, refills, reaps a surplus and an orphan', { timeout: 120_000 }, async () => {
    const stack = await startMetalStack({ hosts: 1, cores: 16 });
    try {
      const { run, env } = stack;
      const repository = new AggregateRepository(env.store);
      const book = async () => (await repository.load(holdBookAggregate, 'dc1')).state;
      const slots = async () => Object.values((await book()).warmSlots ?? {});
      const readySlots = async () => (await slots()).filter((s) => s.readyAt !== null).map((s) => s.slotId);
      const byReports = { timeout: 30_000, interval: 100 };
      await expect.poll(() => stack.hostsDeployed(), byReports).toBe(1);

      await run('vps.createPool', { poolId: 'metal-w', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
      await run('vps.createFlavor', { flavorId: 'small', vcpus: 2, memoryMib: 2_048, diskGib: 20 });
      await run('vps.mapFlavor', { flavorId: 'small', poolId: 'metal-w', offerId: 'hw-small' });
      await run('vps.createTenant', { tenantId: 'tenant-a', name: 'A' });
      await run('vps.setQuota', { tenantId: 'tenant-a', ...quotaOf(4, 16, 16_384, 200) });
      await run('vps.offerPool', { poolId: 'metal-w', tenantId: 'tenant-a' });
      await run('vps.setWarmPool', { poolId: 'metal-w', flavors: [{ flavorId: 'small', image: 'ubuntu-24.04', count: 2 }] });

      // Two slots placed and prepared on n1: stopped on the runtime (no process), ready on the book, their capacity held.
      await expect.poll(async () => (await readySlots()).length, byReports).toBe(2);
      const first = await readySlots();
      // The vps read model shows the pool's setting with its slots counted.
      await expect
        .poll(() => listPools(env.readers.get('vps')!.db()).find((p) => p.poolId === 'metal-w')?.warm, byReports)
        .toEqual({ flavors: [{ flavorId: 'small', image: 'ubuntu-24.04', count: 2, ready: 2, preparing: 0 }], maxSlotAgeSeconds: 86_400 });
      for (const slotId of first) expect(stack.runtimeEntries()[slotId]).toMatchObject({ pid: null, userDataApplies: 0 });
      expect(allocatedByNode(await book()).get('n1')).toEqual({ vcpus: 4, memoryMib: 4_096, diskGib: 40 });

      // A create takes the slot ready longest: placed warm (the event names the slot), running with its user data.
      await run('vps.createInstance', { ...instancePayload('tenant-a', 'vm-1', 'small', 'metal-w'), userData: '#cloud-config\nhostname: vm-1\n' });
      await expect.poll(async () => (await repository.load(instanceAggregate, 'vm-1')).state.observed, byReports).toBe('running');
      const taken = stack.reconciler.model.instances.get('tenant-a/vm-1')?.fromSlot;
      expect(first).toContain(taken);
      const entry = stack.runtimeEntries()[taken!]!;
      expect(processAlive(entry.pid)).toBe(true);
      expect(entry).toMatchObject({ userDataApplies: 1, lastUserData: '#cloud-config\nhostname: vm-1\n' });
      expect((await book()).instances?.['vm-1']).toMatchObject({ nodeId: 'n1', resources: { vcpus: 2, memoryMib: 2_048, diskGib: 20 } });
      await expect
        .poll(
          () => listInstances(env.readers.get('vps')!.db(), { tenantId: 'tenant-a' }).find((i) => i.instanceId === 'vm-1')?.placement?.warmSlot?.slotId,
          byReports,
        )
        .toBe(taken);

      // Refilled: two ready slots again, one of them new; the instance and the slots hold n1's capacity, nothing twice.
      await expect.poll(async () => (await readySlots()).filter((s) => !first.includes(s)).length, byReports).toBe(1);
      expect((await readySlots()).length).toBe(2);
      expect(allocatedByNode(await book()).get('n1')).toEqual({ vcpus: 6, memoryMib: 6_144, diskGib: 60 });

      // Fewer wanted: one slot reaped (SURPLUS), gone from the book and from the host.
      await run('vps.setWarmPool', { poolId: 'metal-w', flavors: [{ flavorId: 'small', image: 'ubuntu-24.04', count: 1 }] });
      await expect.poll(async () => (await slots()).length, byReports).toBe(1);
      const kept = (await slots())[0]!.slotId;
      await expect.poll(() => Object.keys(stack.runtimeEntries()).filter((id) => id !== taken && id !== kept), byReports).toEqual([]);

      // An orphan: a slot on n1 nobody placed. The host lists it; past the grace, the reconciler removes it.
      const orphan = {
        id: 'warm-orphan-1',
        runtime: 'process-runtime',
        flavor: { name: 'small', vcpus: 2, memoryMiB: 2_048, diskGiB: 20 },
        image: { ref: 'ubuntu-24.04' },
        desiredState: 'stopped',
        warm: true,
      };
      await sendHostCommand(stack.hostAccess, { siteId: 'dc1', nodeId: 'n1' }, 'apply', orphan, 'orphan', 'test-orphan');
      await expect.poll(() => stack.runtimeEntries()['warm-orphan-1'] !== undefined, byReports).toBe(true);
      await expect.poll(() => stack.runtimeEntries()['warm-orphan-1'], byReports).toBeUndefined();
      expect(Object.keys(stack.runtimeEntries()).sort()).toEqual([taken, kept].sort());

      // The instance deleted: its capacity (the slot's) freed, the quota given back; the kept slot stays.
      await run('vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' });
      await expect.poll(async () => (await repository.load(instanceAggregate, 'vm-1')).state.observed, byReports).toBe('deleted');
      await expect.poll(async () => reservationOf((await repository.load(tenantAggregate, 'tenant-a')).state, 'vm-1')?.status, byReports).toBe('released');
      expect(stack.runtimeEntries()[taken!]).toBeUndefined();
      expect(allocatedByNode(await book()).get('n1')).toEqual({ vcpus: 2, memoryMib: 2_048, diskGib: 20 });
    } finally {
      await stack.close();
    }
  });

  it('reaps the slot of a host gone silent (NODE_LOST) and keeps the pool full on another', { timeout: 120_000 }, async () => {
    const stack = await startMetalStack({ hosts: 2, cores: 16, reconciler: { hostSilentMs: 3_000 } });
    try {
      const { run, env } = stack;
      const repository = new AggregateRepository(env.store);
      const slots = async () => Object.values((await repository.load(holdBookAggregate, 'dc1')).state.warmSlots ?? {});
      const byReports = { timeout: 30_000, interval: 100 };
      await expect.poll(() => stack.hostsDeployed(), byReports).toBe(2);
      await run('vps.createPool', { poolId: 'metal-w', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
      await run('vps.createFlavor', { flavorId: 'small', vcpus: 2, memoryMib: 2_048, diskGib: 20 });
      await run('vps.mapFlavor', { flavorId: 'small', poolId: 'metal-w', offerId: 'hw-small' });
      await run('vps.setWarmPool', { poolId: 'metal-w', flavors: [{ flavorId: 'small', image: 'ubuntu-24.04', count: 1 }] });
      await expect.poll(async () => (await slots()).filter((s) => s.readyAt !== null).length, byReports).toBe(1);
      const [lost] = await slots();

      // Its host's bcd node stops: past the silence allowed, the slot is reaped as lost and a new one made ready elsewhere.
      await stack.stopHost(lost!.nodeId);
      const other = lost!.nodeId === 'n1' ? 'n2' : 'n1';
      await expect.poll(async () => (await slots()).map((s) => [s.nodeId, s.readyAt !== null]), byReports).toEqual([[other, true]]);
      expect(stack.reconciler.model.warm.removals.get(`${lost!.nodeId}/${lost!.slotId}`)).toMatchObject({ nodeLost: true });
    } finally {
      await stack.close();
    }
  });
});
