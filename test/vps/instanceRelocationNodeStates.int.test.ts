import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import type { NodeState } from '../../schemas/metal/nodeState.ts';
import { getNode } from '../../projections/nodes/queries.ts';
import { instanceById } from '../../projections/vps/queries.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { createAutonomyEngine, createFleetSensors } from '../../services/stack/autonomy/wiring.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { deployPayload, enrollPayload, startEngine } from '../metal/engineFixture.ts';
import { startFakeAgent } from '../metal/fakeAgent.ts';
import { processAlive } from '../support/processAlive.ts';
import { relocationHosts } from './relocationHosts.ts';
import { instancePayload, quotaOf } from './vpsPayloads.ts';

// One instance of `whole` fills a node (the fake machines have 32 cores), so where each goes, and where nothing fits, is
// known from which nodes are deployed and full.
const WHOLE = { flavorId: 'whole', vcpus: 32, memoryMib: 65_536, diskGib: 400 };
const byReports = { timeout: 60_000, interval: 100 };

/** Polls `holds` (set-up hooks have no `expect.poll`). */
async function until(holds: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * The metal nodes' own lifecycle run by the orchestrator and executor over a fake site agent (its `power.get` fails, so a
 * `bmc-check` remediation fails the node the way a failed workflow step does), each deployed node's host a real `bcd
 * node` with the runtime plugin, fleet sensors, the autonomy engine and the VPS reconciler, on one real nats-server.
 */
describe('an instance moved off a node that no longer keeps instances (released, retired, failed), and one that waits for capacity', () => {
  let env: Awaited<ReturnType<typeof startEngine>>;
  let hosts: ReturnType<typeof relocationHosts>;
  let sensors: ReturnType<typeof createFleetSensors>;
  let presence: ReturnType<typeof startAgentPresence>;
  const cleanup: (() => Promise<void>)[] = [];
  const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
  const book = async () => (await env.bus.repository.load(holdBookAggregate, 'dc1')).state;
  const placedOn = async (instanceId: string) => (await book()).instances?.[instanceId]?.nodeId;
  const view = (instanceId: string) => instanceById(env.readers.get('vps')!.db(), instanceId);
  const tenant = async () => (await env.bus.repository.load(tenantAggregate, 'tenant-a')).state;

  const deployNode = async (nodeId: string) => {
    await run('metal.enroll', enrollPayload(nodeId));
    await env.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
    await run('metal.deploy', deployPayload(nodeId));
    await env.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed');
    await hosts.start('dc1', nodeId);
    // Schedulable once the nodes read model has it deployed, with its inventory and its agent connected.
    await until(() => getNode(env.readers.get('nodes')!.db(), nodeId, presence)?.connected === true, `node ${nodeId} deployed with its agent connected`);
  };

  /** Runs a sensor pass once the read models the sensors read show `nodeId` in `state`. */
  const passOnceNodeIs = async (nodeId: string, state: NodeState) => {
    await expect.poll(() => getNode(env.readers.get('nodes')!.db(), nodeId)?.state, byReports).toBe(state);
    await env.readers.get('vps')!.waitFor(await env.store.streamLastSequence(), 30_000);
    await sensors.pass();
  };

  const createRunning = async (instanceId: string) => {
    await run('vps.createInstance', instancePayload('tenant-a', instanceId, WHOLE.flavorId));
    await expect.poll(() => view(instanceId)?.state, byReports).toBe('running');
    const nodeId = (await placedOn(instanceId))!;
    expect(processAlive(hosts.pidOn(nodeId, instanceId))).toBe(true);
    return nodeId;
  };

  const relocations = async (instanceId: string) => {
    const found: unknown[] = [];
    for await (const { batch } of env.store.readAfter('bc.evt.vps.holdBook.dc1', 0))
      for (const e of batch.events) if (e.type === 'InstanceRelocated' && (e.data as { instanceId: string }).instanceId === instanceId) found.push(e.data);
    return found;
  };

  /** Moved off `from`, found in `state`, by the relocate lane, running on another node with the same reservation and usage. */
  const expectMovedAndRunning = async (instanceId: string, from: string, state: NodeState, quota: { reservation: unknown; usage: unknown }) => {
    const reason = expect.stringContaining(`node ${from} is ${state}`);
    await expect.poll(() => placedOn(instanceId), byReports).not.toBe(from);
    const to = (await placedOn(instanceId))!;
    const decision = (await env.bus.repository.load(decisionAggregate, decisionIdOf('relocate', instanceId))).state;
    expect(decision).toMatchObject({ exists: true, disposition: 'auto', plan: { action: 'vps.relocate', params: { siteId: 'dc1', fromNodeId: from } } });
    expect(await relocations(instanceId)).toEqual([expect.objectContaining({ fromNodeId: from, nodeId: to, reason })]);
    await expect.poll(() => processAlive(hosts.pidOn(to, instanceId)), byReports).toBe(true);
    await expect
      .poll(() => view(instanceId), byReports)
      .toMatchObject({
        state: 'running',
        // The runtime's words on its new host (no refusal left over from a wait).
        message: `pid ${hosts.pidOn(to, instanceId)}`,
        placement: { nodeId: to, relocatedFrom: { nodeId: from, reason } },
      });
    // The node left holds nothing of it; the quota is the same reservation and the same usage.
    expect(allocatedByNode(await book()).has(from)).toBe(false);
    expect(allocatedByNode(await book()).get(to)).toEqual({ vcpus: WHOLE.vcpus, memoryMib: WHOLE.memoryMib, diskGib: WHOLE.diskGib });
    const t = await tenant();
    expect({ reservation: reservationOf(t, instanceId), usage: t.exists ? t.usage : undefined }).toEqual(quota);
    return to;
  };

  const quotaNow = async (instanceId: string) => {
    const t = await tenant();
    return { reservation: reservationOf(t, instanceId), usage: t.exists ? t.usage : undefined };
  };

  beforeAll(async () => {
    env = await startEngine();
    const site = await startFakeAgent(env.nc, 'dc1', { failKinds: ['power.get'], failCode: 'REDFISH_UNSUPPORTED' });
    cleanup.push(() => site[Symbol.asyncDispose]());
    presence = startAgentPresence(env.nc, { repository: env.bus.repository, windowMs: 1_500, log: env.log });
    cleanup.push(async () => presence.stop());
    hosts = relocationHosts(env.nats.url, env.log);
    cleanup.push(() => hosts[Symbol.asyncDispose]());
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    await Promise.all(['n1', 'n2', 'n3', 'n4'].map(deployNode));

    await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
    await run('vps.createFlavor', WHOLE);
    await run('vps.mapFlavor', { flavorId: WHOLE.flavorId, poolId: 'metal-a', offerId: 'hw-whole' });
    await run('vps.createTenant', { tenantId: 'tenant-a', name: 'A' });
    await run('vps.setQuota', { tenantId: 'tenant-a', ...quotaOf(10, 1_000, 1_048_576, 10_000) });
    await run('vps.offerPool', { poolId: 'metal-a', tenantId: 'tenant-a' });

    const nodes = env.readers.get('nodes')!;
    const reconcilerConfig = loadReconcilerConfig({}, { resyncMs: 100, hostResendMs: 2_000, placementWaitMs: 3_000 });
    const reconciler = new VpsReconciler(env.nc, env.store, reconcilerConfig, env.log, {
      providers: new Map(),
      tokens: { versionOf: () => Promise.reject(new Error('no provider')), open: () => Promise.reject(new Error('no provider')) },
      nodes,
      presenceWindowMs: 1_500,
    });
    await reconciler.start();
    cleanup.push(() => reconciler.stop());
    const config = loadAutonomyConfig({}, { hostSilentMs: 2_000 });
    sensors = createFleetSensors(env.nc, { nodes, vps: env.readers.get('vps')! }, config, env.log, undefined, presence);
    const engine = createAutonomyEngine(env.nc, env.store, config, env.log);
    await engine.start();
    cleanup.push(() => engine.stop());
  }, 180_000);

  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    await env?.[Symbol.asyncDispose]();
  }, 60_000);

  it(
    'released (metal.undeploy, wiped back to ready): its instance runs on another host, nothing is left on the released node',
    { timeout: 120_000 },
    async () => {
      const from = await createRunning('vm-rel');
      const quota = await quotaNow('vm-rel');
      await run('metal.undeploy', { nodeId: from });
      // The release reboots the machine into the ramdisk: its host, and the instance's process, stop there.
      await hosts.powerOff(from);
      await env.waitForNode(from, (s) => s.exists && s.state === 'ready');
      await passOnceNodeIs(from, 'ready');
      await expectMovedAndRunning('vm-rel', from, 'ready', quota);
    },
  );

  it('retired (a failed node the operator retires): its instance runs on another host', { timeout: 120_000 }, async () => {
    const from = await createRunning('vm-ret');
    const quota = await quotaNow('vm-ret');
    await run('metal.remediate', { nodeId: from, profile: 'bmc-check' });
    await env.waitForNode(from, (s) => s.exists && s.state === 'failed');
    // Retired before the next sensor pass: the pass finds the node retired, not failed.
    await run('metal.retire', { nodeId: from });
    await hosts.powerOff(from);
    await env.waitForNode(from, (s) => s.exists && s.state === 'retired');
    await passOnceNodeIs(from, 'retired');
    await expectMovedAndRunning('vm-ret', from, 'retired', quota);
  });

  it(
    'failed (a remediation whose step failed) with no other node free: the request stands, shown as waiting for capacity, until a host is deployed',
    { timeout: 180_000 },
    async () => {
      // Every deployed node is full: n5 is the only place for the instance.
      await deployNode('n5');
      const from = await createRunning('vm-fail');
      expect(from).toBe('n5');
      const quota = await quotaNow('vm-fail');
      const copy = hosts.pidOn(from, 'vm-fail');
      await run('metal.remediate', { nodeId: from, profile: 'bmc-check' });
      await env.waitForNode(from, (s) => s.exists && s.state === 'failed');
      await passOnceNodeIs(from, 'failed');

      // The lane asked for the move; no node fits: the request stands on the book and the instance says why it waits.
      await expect
        .poll(() => view('vm-fail'), byReports)
        .toMatchObject({ state: 'provisioning', addresses: [], message: expect.stringMatching(/NO_CAPACITY/) });
      expect((await book()).instances?.['vm-fail']).toMatchObject({
        nodeId: from,
        relocation: { fromNodeId: from, reason: expect.stringContaining(`node ${from} is failed`) },
      });
      expect(await relocations('vm-fail')).toEqual([]);
      expect(await quotaNow('vm-fail')).toEqual(quota);
      // Its host is up (only its BMC check failed): the copy there is the only one, and is left running meanwhile.
      expect(processAlive(copy)).toBe(true);

      // A host is deployed: the instance moves there and runs, and the failed node's host is told to remove its copy.
      await deployNode('n6');
      expect(await expectMovedAndRunning('vm-fail', from, 'failed', quota)).toBe('n6');
      await expect.poll(() => processAlive(copy), byReports).toBe(false);
      await expect.poll(() => hosts.pidOn(from, 'vm-fail'), byReports).toBeNull();
      expect((await env.bus.repository.load(instanceAggregate, 'vm-fail')).state).toMatchObject({
        observed: 'running',
        message: `pid ${hosts.pidOn('n6', 'vm-fail')}`,
      });
    },
  );
});
