import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { fakeInventoryOf } from '../metal/fakeAgent.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';
import { seen, startRemediationEngine } from './instanceRemediationFixture.ts';
import { instancePayload } from './vpsPayloads.ts';

const GIB = 1_024 ** 3;

describe('vps.remediateInstance on a metal-pool instance: the workflow engine, the VPS reconciler and a host running bcd node', () => {
  it('runs the profile against the instance, leaves its host alone meanwhile, then applies it again on its node', { timeout: 150_000 }, async () => {
    await using env = await startRemediationEngine();
    const workflowOf = (result: { events: readonly { data: unknown }[] }) => (result.events[0]!.data as { workflowId: string }).workflowId;
    using plugins = await bcxPluginFolder('processRuntime');
    plugins.pin('process-runtime');
    const runtimes = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log: env.log });
    const entryOf = (id: string) => {
      try {
        return (JSON.parse(readFileSync(join(plugins.stateRoot, 'plugins/process-runtime/instances.json'), 'utf8')) as Record<string, { applies: number }>)[id];
      } catch {
        return undefined;
      }
    };
    const stateDir = mkdtempSync('/var/tmp/bc-remediate-n1-');
    let host: { agent: NodeAgent; nc: NatsConnection } | undefined;
    let reconciler: VpsReconciler | undefined;
    try {
      // A deployed host with the runtime plugin, and a metal pool that runs instances on it.
      await env.run('metal.enroll', { ...enrollPayload('n1'), macs: ['52:54:00:00:03:01'] });
      await env.run('metal.completeOperation', { nodeId: 'n1', workflowId: workflowOf(await env.run('metal.startInspection', { nodeId: 'n1' })) });
      await env.run('metal.completeOperation', { nodeId: 'n1', workflowId: workflowOf(await env.run('metal.deploy', deployBody('n1'))) });
      const inventory = {
        ...fakeInventoryOf('n1'),
        cpus: { count: 1, model: null, cores: 8 },
        memoryMiB: 32_768,
        disks: [{ id: 'd0', sizeBytes: 500 * GIB, model: null, serial: null }],
      };
      await env.run('metal.recordInventory', { nodeId: 'n1', workflowId: 'wf-00000000000a', inventory });
      await env.run('vps.createPool', { poolId: 'metal-r', class: 'metal', agent: 'bcd', siteId: 'dc1', runtime: 'process-runtime' });
      await env.run('vps.mapFlavor', { flavorId: 'small', poolId: 'metal-r', offerId: 'hw-small' });
      await env.run('vps.offerPool', { poolId: 'metal-r', tenantId: 't-a' });
      const nc = await connectNats(env.nats.url, 'bcd-node-n1');
      const agent = await startNodeAgent(nc, {
        siteId: 'dc1',
        nodeId: 'n1',
        stateDir,
        heartbeatIntervalMs: 100,
        reconcileIntervalMs: 500,
        bootId: () => 'boot-a',
        log: env.log,
        runtimes: () => runtimes.hosts.values(),
        drivers: () => runtimes.drivers(),
      });
      host = { agent, nc };
      await agent.registered;
      const nodes = env.readers.get('nodes')!;
      await expect.poll(() => listNodes(nodes.db(), { siteId: 'dc1', limit: 10 }).items.map((n) => n.inventory?.cpus.cores), { timeout: 30_000 }).toEqual([8]);
      reconciler = new VpsReconciler(env.nc, env.store, loadReconcilerConfig({}, { resyncMs: 100, hostResendMs: 2_000, placementWaitMs: 5_000 }), env.log, {
        providers: new Map(),
        tokens: { versionOf: () => Promise.reject(new Error('no provider')), open: () => Promise.reject(new Error('no provider')) },
        nodes,
        presenceWindowMs: 5_000,
      });
      await reconciler.start();
      const byReports = { timeout: 30_000, interval: 100 };

      await env.run('vps.createInstance', instancePayload('t-a', 'vm-r', 'small', 'metal-r'));
      await env.waitForInstance('vm-r', (s) => s.observed === 'running');
      await expect.poll(() => entryOf('vm-r')?.applies, byReports).toBe(1);

      const requested = await env.run('vps.remediateInstance', { tenantId: 't-a', instanceId: 'vm-r', profile: 'instance-probe' });
      expect(requested.events[0]).toMatchObject({ type: 'InstanceRemediationRequested', data: { instanceId: 'vm-r', poolId: 'metal-r', returnTo: 'running' } });
      const done = await env.waitForInstance('vm-r', (s) => s.remediation === null && s.desired === 'running');
      expect(done.attention).toBeNull();
      // The profile's step ran against the instance as the reconciler recorded it from its host.
      expect(seen.filter((s) => s.instanceId === 'vm-r')).toEqual([
        { instanceId: 'vm-r', tenantId: 't-a', poolId: 'metal-r', providerInstanceId: null, addresses: ['127.0.0.1'], observed: 'running' },
      ]);
      // Handed back to its host: applied once more there, and running.
      await expect.poll(() => entryOf('vm-r')?.applies, byReports).toBe(2);
      expect((await env.instanceState('vm-r')).observed).toBe('running');
      // Applied once, not on every pass after.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(entryOf('vm-r')?.applies).toBe(2);
    } finally {
      await reconciler?.stop();
      await host?.agent.stop();
      await host?.nc.close();
      await runtimes.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
