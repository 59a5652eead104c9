import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { decisionIdOf } from '../../schemas/autonomy/ids.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import { reservationOf } from '../../schemas/vps/tenantState.ts';
import { decisionAggregate } from '../../services/autonomy/decision/decision.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { createAutonomyEngine, createFleetSensors } from '../../services/stack/autonomy/wiring.ts';
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

const HOST_SILENT_MS = 2_000;

describe('an instance moved off a lost node: a real nats-server, fleet sensors, the autonomy engine, the VPS reconciler and two hosts running bcd node', () => {
  it(
    "places it on the other host when its own goes silent, through the relocate lane, and removes the returning host's copy",
    { timeout: 150_000 },
    async () => {
      await using env = await startBackbone();
      const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
      const repository = new AggregateRepository(env.store);
      const responder = serveCommands(env.nc, env.bus, env.log);
      const registrations = startRegistrationService(env.nc, env.store, env.log);
      const nodesModel = env.readers.get('nodes')!;
      const hosts = new Map<string, { agent: NodeAgent; nc: NatsConnection }>();
      const folders: Disposable[] = [];
      const runtimes: Awaited<ReturnType<typeof startPluginsFolder>>[] = [];
      const stateDirs = new Map<string, string>();
      const pluginState = new Map<string, string>();
      const cleanup: (() => Promise<void>)[] = [];
      try {
        await run('site.create', { siteId: 'dc1', name: 'DC 1' });
        // Two deployed hosts, each with the runtime plugin: n1 (8 cores, the tightest fit) and n2 (16 cores).
        const startHost = async (nodeId: string, bootId: string) => {
          const nc = await connectNats(env.nats.url, `bcd-node-${nodeId}`);
          const plugins = runtimes[nodeId === 'n1' ? 0 : 1]!;
          const agent = await startNodeAgent(nc, {
            siteId: 'dc1',
            nodeId,
            stateDir: stateDirs.get(nodeId)!,
            heartbeatIntervalMs: 100,
            reconcileIntervalMs: 500,
            bootId: () => bootId,
            log: env.log,
            runtimes: () => plugins.hosts.values(),
            drivers: () => plugins.drivers(),
          });
          hosts.set(nodeId, { agent, nc });
          await agent.registered;
        };
        for (const [nodeId, cores, mac] of [
          ['n1', 8, '52:54:00:00:02:01'],
          ['n2', 16, '52:54:00:00:02:02'],
        ] as const) {
          await deployMetalHost(run, nodeId, cores, mac);
          const folder = await bcxPluginFolder('processRuntime');
          folder.pin('process-runtime');
          folders.push(folder);
          runtimes.push(await startPluginsFolder(folder.folder, { stateRoot: folder.stateRoot, privileged: new Set(), log: env.log }));
          pluginState.set(nodeId, join(folder.stateRoot, 'plugins/process-runtime/instances.json'));
          stateDirs.set(nodeId, mkdtempSync(`/var/tmp/bc-relocate-${nodeId}-`));
          await startHost(nodeId, 'boot-a');
        }
        const pidOn = (nodeId: string, id: string): number | null => {
          try {
            return (JSON.parse(readFileSync(pluginState.get(nodeId)!, 'utf8')) as Record<string, { pid: number | null }>)[id]?.pid ?? null;
          } catch {
            return null;
          }
        };

        await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
        await run('vps.createFlavor', { flavorId: 'medium', vcpus: 4, memoryMib: 4_096, diskGib: 40 });
        await run('vps.mapFlavor', { flavorId: 'medium', poolId: 'metal-a', offerId: 'hw-medium' });
        await run('vps.createTenant', { tenantId: 'tenant-a', name: 'A' });
        await run('vps.setQuota', { tenantId: 'tenant-a', ...quotaOf(4, 128, 65_536, 1_000) });
        await run('vps.offerPool', { poolId: 'metal-a', tenantId: 'tenant-a' });

        const reconciler = new VpsReconciler(
          env.nc,
          env.store,
          loadReconcilerConfig({}, { resyncMs: 100, hostResendMs: 2_000, placementWaitMs: 3_000 }),
          env.log,
          {
            providers: new Map(),
            tokens: { versionOf: () => Promise.reject(new Error('no provider')), open: () => Promise.reject(new Error('no provider')) },
            nodes: nodesModel,
            presenceWindowMs: 1_500,
          },
        );
        await reconciler.start();
        cleanup.push(() => reconciler.stop());
        const presence = startAgentPresence(env.nc, { repository: env.bus.repository, windowMs: 1_500, log: env.log });
        cleanup.push(() => presence.stop());
        const config = loadAutonomyConfig({}, { hostSilentMs: HOST_SILENT_MS });
        const sensors = createFleetSensors(env.nc, { nodes: nodesModel, vps: env.readers.get('vps')! }, config, env.log, undefined, presence);
        const engine = createAutonomyEngine(env.nc, env.store, config, env.log);
        await engine.start();
        cleanup.push(() => engine.stop());

        const instance = async () => (await repository.load(instanceAggregate, 'vm-1')).state;
        const book = async () => (await repository.load(holdBookAggregate, 'dc1')).state;
        const tenant = async () => (await repository.load(tenantAggregate, 'tenant-a')).state;
        const usageOf = async () => {
          const t = await tenant();
          return t.exists ? t.usage : undefined;
        };
        const byReports = { timeout: 30_000, interval: 100 };
        await expect
          .poll(() => listNodes(nodesModel.db(), { siteId: 'dc1', limit: 10 }).items.map((n) => [n.nodeId, n.state, n.inventory?.cpus.cores]), {
            timeout: 30_000,
          })
          .toEqual([
            ['n1', 'deployed', 8],
            ['n2', 'deployed', 16],
          ]);

        // Created: placed on n1 (the tightest fit), running there.
        await run('vps.createInstance', instancePayload('tenant-a', 'vm-1', 'medium'));
        await expect.poll(async () => (await book()).instances?.['vm-1']?.nodeId, byReports).toBe('n1');
        await expect.poll(async () => (await instance()).observed, byReports).toBe('running');
        const firstPid = pidOn('n1', 'vm-1');
        expect(processAlive(firstPid)).toBe(true);
        const usage = await usageOf();
        const reserved = reservationOf(await tenant(), 'vm-1');

        // While both hosts beat, a pass signals nothing about the instance.
        await sleep(HOST_SILENT_MS + 500);
        await sensors.pass();
        expect((await book()).instances?.['vm-1']).toMatchObject({ nodeId: 'n1' });

        // n1's bcd node goes silent (its runtime's process runs on: a partition, not a crash).
        const n1 = hosts.get('n1')!;
        await n1.agent.stop();
        await n1.nc.close();
        await sleep(HOST_SILENT_MS + 500);
        await sensors.pass();

        // The relocate lane (auto) asks for the move, the reconciler places it on n2 and n2 runs it.
        await expect.poll(async () => (await book()).instances?.['vm-1']?.nodeId, byReports).toBe('n2');
        const decision = (await repository.load(decisionAggregate, decisionIdOf('relocate', 'vm-1'))).state;
        expect(decision).toMatchObject({ exists: true, disposition: 'auto', plan: { action: 'vps.relocate', params: { siteId: 'dc1', fromNodeId: 'n1' } } });
        await expect.poll(async () => processAlive(pidOn('n2', 'vm-1')), byReports).toBe(true);
        await expect.poll(async () => (await instance()).observed, byReports).toBe('running');
        const relocated: unknown[] = [];
        for await (const { batch } of env.store.readAfter('bc.evt.vps.holdBook.dc1', 0))
          for (const e of batch.events) if (e.type === 'InstanceRelocated') relocated.push(e.data);
        expect(relocated).toEqual([expect.objectContaining({ instanceId: 'vm-1', fromNodeId: 'n1', nodeId: 'n2', reason: expect.stringMatching(/silent/) })]);
        expect(allocatedByNode(await book())).toEqual(new Map([['n2', { vcpus: 4, memoryMib: 4_096, diskGib: 40 }]]));
        // Quota unchanged: the same reservation, the same usage.
        expect(reservationOf(await tenant(), 'vm-1')).toEqual(reserved);
        expect(await usageOf()).toEqual(usage);
        // The old copy still runs on n1, unreachable: it was never ours to kill while its host was silent.
        expect(processAlive(firstPid)).toBe(true);

        // n1 comes back: its bcd node lists its copy, and is asked to remove it; n2's goes on serving.
        await startHost('n1', 'boot-a');
        await expect.poll(() => processAlive(firstPid), byReports).toBe(false);
        await expect.poll(() => pidOn('n1', 'vm-1'), byReports).toBeNull();
        await sleep(1_000);
        expect(processAlive(pidOn('n2', 'vm-1'))).toBe(true);
        expect((await instance()).observed).toBe('running');
        expect((await book()).instances?.['vm-1']?.nodeId).toBe('n2');
        expect(reconciler.model.copiesLeft.get('n1')?.size ?? 0).toBe(0);

        // Deleted: removed from n2, capacity and quota freed.
        await run('vps.deleteInstance', { tenantId: 'tenant-a', instanceId: 'vm-1' });
        await expect.poll(async () => (await instance()).observed, byReports).toBe('deleted');
        await expect.poll(async () => allocatedByNode(await book()).size, byReports).toBe(0);
      } finally {
        for (const c of cleanup.reverse()) await c();
        for (const h of hosts.values()) {
          await h.agent.stop().catch(() => undefined);
          await h.nc.close().catch(() => undefined);
        }
        for (const r of runtimes) await r.stop();
        await registrations.stop();
        responder.unsubscribe();
        for (const dir of stateDirs.values()) rmSync(dir, { recursive: true, force: true });
        for (const f of folders) f[Symbol.dispose]();
      }
    },
  );
});
