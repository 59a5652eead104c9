import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import { sendAgentCommand } from '../../services/agents/agentExchange.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadReconcilerConfig, type ReconcilerConfig } from '../../services/processes/vpsReconciler/config.ts';
import type { MetalAccess } from '../../services/processes/vpsReconciler/metalAccess.ts';
import { VpsReconciler } from '../../services/processes/vpsReconciler/reconciler.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { deployMetalHost } from './metalHost.ts';

/** What the process runtime keeps of one instance (`test/fixtures/bcx/processRuntime.ts`). */
export interface ProcessRuntimeEntry {
  pid: number | null;
  applies: number;
  userDataApplies: number;
  lastUserData: string | null;
}

/**
 * A real nats-server with the command bus, `vps-reconciler` and deployed hosts `n1…nN` at site `dc1`, each running an
 * in-process `bcd node` with the process runtime (which declares `warm-start`) from one pinned plugins folder: the
 * metal-pool tests' and `bench:vps`'s stack. `close` stops everything it started.
 */
export async function startMetalStack(options: { hosts: number; cores: number; reconciler?: Partial<ReconcilerConfig> }) {
  const env = await startBackbone();
  const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
  const responder = serveCommands(env.nc, env.bus, env.log);
  const registrations = startRegistrationService(env.nc, env.store, env.log);
  const plugins = await bcxPluginFolder('processRuntime');
  plugins.pin('process-runtime');
  const runtimes = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log: env.log });
  const stateDirs: string[] = [];
  const hosts = new Map<string, { stop(): Promise<void> }>();
  const connections: NatsConnection[] = [];
  let reconciler: VpsReconciler | undefined;
  const close = async () => {
    await reconciler?.stop();
    for (const h of hosts.values()) await h.stop();
    await runtimes.stop();
    for (const nc of connections) await nc.close();
    await registrations.stop();
    responder.unsubscribe();
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
    plugins[Symbol.dispose]();
    await env[Symbol.asyncDispose]();
  };
  try {
    await run('site.create', { siteId: 'dc1', name: 'DC 1' });
    for (let i = 1; i <= options.hosts; i++) {
      const nodeId = `n${i}`;
      await deployMetalHost(run, nodeId, options.cores, `52:54:00:00:02:${i.toString(16).padStart(2, '0')}`);
      const stateDir = mkdtempSync(`/var/tmp/bc-warm-${nodeId}-`);
      stateDirs.push(stateDir);
      const nc = await connectNats(env.nats.url, `bcd-node-${nodeId}`);
      connections.push(nc);
      const agent = await startNodeAgent(nc, {
        siteId: 'dc1',
        nodeId,
        stateDir,
        heartbeatIntervalMs: 100,
        reconcileIntervalMs: 500,
        bootId: () => 'boot-a',
        log: env.log,
        runtimes: () => runtimes.hosts.values(),
        drivers: () => runtimes.drivers(),
      });
      hosts.set(nodeId, agent);
      await agent.registered;
    }
    const config = loadReconcilerConfig({}, { resyncMs: 100, hostResendMs: 2_000, placementWaitMs: 10_000, ...options.reconciler });
    reconciler = new VpsReconciler(env.nc, env.store, config, env.log, {
      providers: new Map(),
      // No provider pool here: the tokens are never asked for.
      tokens: { versionOf: () => Promise.reject(new Error('no provider')), open: () => Promise.reject(new Error('no provider')) },
      nodes: env.readers.get('nodes')!,
      presenceWindowMs: 5_000,
    });
    await reconciler.start();
  } catch (err) {
    await close();
    throw err;
  }
  const js = jetstream(env.nc);
  /** Reaches hosts as the reconciler does: a test sends a host what nobody in the control plane asked for (an orphan). */
  const hostAccess: MetalAccess = {
    nodes: undefined,
    presence: { presenceOf: () => undefined },
    sendAgentCommand: (command) => sendAgentCommand({ js }, command),
  };
  return {
    env,
    run,
    reconciler: reconciler,
    hostAccess,
    /** Stops a host's `bcd node` (its machine goes silent); what its runtime runs stays. */
    async stopHost(nodeId: string) {
      await hosts.get(nodeId)!.stop();
      hosts.delete(nodeId);
    },
    /** The process runtime's record of every instance it runs (one plugin state folder: every host's plugin shares it). */
    runtimeEntries(): Record<string, ProcessRuntimeEntry> {
      try {
        return JSON.parse(readFileSync(join(plugins.stateRoot, 'plugins/process-runtime/instances.json'), 'utf8')) as Record<string, ProcessRuntimeEntry>;
      } catch {
        return {};
      }
    },
    /** The nodes read model shows every host deployed with its inventory (under load the projector may lag). */
    hostsDeployed: () => listNodes(env.readers.get('nodes')!.db(), { siteId: 'dc1', limit: 100 }).items.filter((n) => n.state === 'deployed').length,
    close,
  };
}
