import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { nodeAgentId, startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import { signAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { allocatedByNode } from '../../services/vps/placement/bookSnapshot.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { instancePayload, quotaOf } from './vpsPayloads.ts';
import { processAlive } from '../support/processAlive.ts';
import { deployMetalHost } from './metalHost.ts';

describe('instances in a metal pool, end to end: a real nats-server, the VPS reconciler and a deployed host running bcd node', () => {
  it(
    'places at create, runs through the runtime plugin with the SSH keys, stops, starts and deletes by the host verified reports, and frees the capacity',
    { timeout: 120_000 },
    async () => {
      await using env = await startBackbone();
      const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
      const repository = new AggregateRepository(env.store);
      const responder = serveCommands(env.nc, env.bus, env.log);
      const registrations = startRegistrationService(env.nc, env.store, env.log);
      using plugins = await bcxPluginFolder('processRuntime');
      plugins.pin('process-runtime');
      const runtimes = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log: env.log });
      const pluginEntry = (id: string): { pid: number | null; userDataApplies: number; lastSshKeys: string[] | null } | undefined => {
        try {
          const entries = JSON.parse(readFileSync(join(plugins.stateRoot, 'plugins/process-runtime/instances.json'), 'utf8')) as Record<
            string,
            { pid: number | null; userDataApplies: number; lastSshKeys: string[] | null }
          >;
          return entries[id];
        } catch {
          return undefined;
        }
      };
      const pluginPid = (id: string): number | null => pluginEntry(id)?.pid ?? null;
      const stateDirs: string[] = [];
      const hosts: { stop(): Promise<void> }[] = [];
      const connections: NatsConnection[] = [];
      let reconciler: VpsReconciler | undefined;
      try {
        // Two deployed hosts: n1 (8 cores) runs bcd node with the runtime plugin; n2 (16 cores) runs bcd node without it.
        await run('site.create', { siteId: 'dc1', name: 'DC 1' });
        for (const [nodeId, cores, mac] of [
          ['n1', 8, '52:54:00:00:01:01'],
          ['n2', 16, '52:54:00:00:01:02'],
        ] as const) {
          await deployMetalHost(run, nodeId, cores, mac);
          const stateDir = mkdtempSync(`/var/tmp/bc-metal-${nodeId}-`);
          stateDirs.push(stateDir);
          const nc = await connectNats(env.nats.url, `bcd-node-${nodeId}`);
          connections.push(nc);
          const withRuntime = nodeId === 'n1';
          const agent = await startNodeAgent(nc, {
            siteId: 'dc1',
            nodeId,
            stateDir,
            heartbeatIntervalMs: 100,
            reconcileIntervalMs: 500,
            bootId: () => 'boot-a',
            log: env.log,
            ...(withRuntime ? { runtimes: () => runtimes.hosts.values(), drivers: () => runtimes.drivers() } : {}),
          });
          hosts.push(agent);
          await agent.registered;
        }
        await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
        for (const [flavorId, vcpus] of [
          ['medium', 4],
          ['huge', 64],
        ] as const) {
          await run('vps.createFlavor', { flavorId, vcpus, memoryMib: 4_096, diskGib: 40 });
          await run('vps.mapFlavor', { flavorId, poolId: 'metal-a', offerId: `hw-${flavorId}` });
        }
        await run('vps.createTenant', { tenantId: 'tenant-a', name: 'A' });
        await run('vps.setQuota', { tenantId: 'tenant-a', ...quotaOf(4, 128, 65_536, 1_000) });
        await run('vps.offerPool', { poolId: 'metal-a', tenantId: 'tenant-a' });

        reconciler = new VpsReconciler(env.nc, env.store, loadReconcilerConfig({}, { resyncMs: 100, hostResendMs: 2_000, placementWaitMs: 3_000 }), env.log, {
          providers: new Map(),
          // No provider pool here: the tokens are never asked for.
          tokens: { versionOf: () => Promise.reject(new Error('no provider')), open: () => Promise.reject(new Error('no provider')) },
          nodes: env.readers.get('nodes')!,
          presenceWindowMs: 5_000,
        });
        await reconciler.start();

        const instance = async (id: string) => (await repository.load(instanceAggregate, id)).state;
        const book = async () => (await repository.load(holdBookAggregate, 'dc1')).state;
        const reservation = async (id: string) => reservationOf((await repository.load(tenantAggregate, 'tenant-a')).state, id);
        const byReports = { timeout: 30_000, interval: 100 };

        // The nodes read model shows both hosts deployed with their inventory (under load the projector may lag).
        await expect
          .poll(() => listNodes(env.readers.get('nodes')!.db(), { siteId: 'dc1', limit: 10 }).items.map((n) => [n.nodeId, n.state, n.inventory?.cpus.cores]), {
            timeout: 30_000,
          })
          .toEqual([
            ['n1', 'deployed', 8],
            ['n2', 'deployed', 16],
          ]);

        // Created: placed on n1, the only node carrying bc.dev/driver.process-runtime, with why in the event.
        await run('vps.createInstance', { ...instancePayload('tenant-a', 'vm-1', 'medium'), userData: '#cloud-config\n' });
        await expect.poll(async () => (await book()).instances?.['vm-1']?.nodeId, byReports).toBe('n1');
        await expect.poll(async () => (await instance('vm-1')).observed, byReports).toBe('running');
        expect((await instance('vm-1')).addresses).toEqual(['127.0.0.1']);
        const pid = pluginPid('vm-1');
        expect(processAlive(pid)).toBe(true);
        // The runtime got the tenant's SSH keys in its apply spec, with the user data on the first apply.
        expect(pluginEntry('vm-1')).toMatchObject({ lastSshKeys: instancePayload('tenant-a', 'vm-1').sshKeys, userDataApplies: 1 });
        expect(allocatedByNode(await book()).get('n1')).toEqual({ vcpus: 4, memoryMib: 4_096, diskGib: 40 });

        // A heartbeat for n1 signed by a key no agent registered, saying the instance stopped: never heard.
        const forger = generateKeyPairSync('ed25519');
        const forged = signAgentHeartbeat(
          {
            agentId: nodeAgentId('n1'),
            siteId: 'dc1',
            nodeId: 'n1',
            sentAt: new Date().toISOString(),
            instances: [{ id: 'vm-1', runtime: 'process-runtime', desiredState: 'stopped', state: 'stopped', addresses: [] }],
          },
          { privateKey: forger.privateKey, publicKeyRaw: forger.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32) },
        );
        for (let i = 0; i < 5; i++) env.nc.publish(Subjects.agentHeartbeat('dc1', 'n1'), JSON.stringify(forged));

        // Too big for any node: refused with every node's reason, in error, its quota given back.
        await run('vps.createInstance', instancePayload('tenant-a', 'vm-big', 'huge'));
        await expect.poll(async () => (await instance('vm-big')).observed, byReports).toBe('error');
        expect((await instance('vm-big')).message).toMatch(/NO_CAPACITY.*n1: INSUFFICIENT_CAPACITY.*n2: NO_RUNTIME_DRIVER/);
        await expect.poll(async () => (await reservation('vm-big'))?.status, byReports).toBe('released');
        expect((await instance('vm-1')).observed).toBe('running');

        // Stopped: the host's runtime stops the process and its heartbeat says so.
        await run('vps.stopInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' });
        await expect.poll(async () => (await instance('vm-1')).observed, byReports).toBe('stopped');
        expect((await instance('vm-1')).addresses).toEqual([]);
        expect(processAlive(pid)).toBe(false);

        // Started again: a new process, running with its address.
        await run('vps.startInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' });
        await expect.poll(async () => (await instance('vm-1')).observed, byReports).toBe('running');
        expect(processAlive(pluginPid('vm-1'))).toBe(true);
        // Later applies carry the keys again, the user data not.
        expect(pluginEntry('vm-1')).toMatchObject({ lastSshKeys: instancePayload('tenant-a', 'vm-1').sshKeys, userDataApplies: 1 });

        // Deleted: removed from the host, the node's capacity freed, the quota given back.
        const lastPid = pluginPid('vm-1');
        await run('vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' });
        await expect.poll(async () => (await instance('vm-1')).observed, byReports).toBe('deleted');
        expect(processAlive(lastPid)).toBe(false);
        expect(pluginPid('vm-1')).toBeNull();
        await expect.poll(async () => (await book()).instances?.['vm-1'], byReports).toBeUndefined();
        expect(allocatedByNode(await book()).get('n1')).toBeUndefined();
        await expect.poll(async () => (await reservation('vm-1'))?.status, byReports).toBe('released');

        // The freed capacity takes the next instance.
        await run('vps.createInstance', instancePayload('tenant-a', 'vm-2', 'medium'));
        await expect.poll(async () => (await instance('vm-2')).observed, byReports).toBe('running');
        await run('vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-2' });
        await expect.poll(async () => (await instance('vm-2')).observed, byReports).toBe('deleted');
      } finally {
        await reconciler?.stop();
        for (const h of hosts) await h.stop();
        await runtimes.stop();
        for (const nc of connections) await nc.close();
        await registrations.stop();
        responder.unsubscribe();
        for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
