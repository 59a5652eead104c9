import { allProjections } from '../../projections/catalog.ts';
import { Projector } from '../projectors/projector.ts';
import { ProjectorGroup } from '../projectors/projectorGroup.ts';
import { ReadModelFiles } from '../projectors/readModelFiles.ts';
import { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { serveProjectorControl } from '../projectors/projectorControl.ts';
import { createMetrics } from '../api/metrics.ts';
import { buildApi } from '../api/server.ts';
import { serveCommands } from '../commands/commandResponder.ts';
import { busCommands } from '../api/commandCatalog.ts';
import { startGrantService } from '../secrets/grantService.ts';
import { loadMasterKey } from '../secrets/masterKey.ts';
import { BmcMonitor } from '../processes/bmcMonitor/bmcMonitor.ts';
import { loadBmcMonitorConfig } from '../processes/bmcMonitor/bmcMonitorConfig.ts';
import { loadWorkflowConfig } from '../workflow/config.ts';
import { WorkflowExecutor } from '../workflow/executor.ts';
import { WorkflowOrchestrator } from '../processes/orchestrator/orchestrator.ts';
import { loadOrCreateBrokerMaterial } from '../trust/broker/brokerMaterial.ts';
import { startBootTokenService } from '../trust/join/bootTokenService.ts';
import { startJoinService } from '../trust/join/joinService.ts';
import { startRegistrationService } from '../trust/agent/registrationService.ts';
import { loadPluginModules } from '../plugins/pluginModules.ts';
import { loadReconcilerConfig } from '../processes/vpsReconciler/config.ts';
import { providersOf } from '../processes/vpsReconciler/providerClients.ts';
import { VpsReconciler } from '../processes/vpsReconciler/reconciler.ts';
import { loadRolloutControllerConfig } from '../processes/rolloutController/config.ts';
import { RolloutController } from '../processes/rolloutController/rolloutController.ts';
import { sealedProviderTokens } from './providerTokens.ts';
import { agentEndpointsOf, brokerDirOf, publicUrlOf } from '../platform/config.ts';
import { runPlugin, type RunningPlugin } from './runPlugin.ts';
import type { Runtime } from './runtime.ts';
import type { LeasedService } from '../../schemas/lease.ts';
import { LeaderLease, type LeaseTerm } from '../platform/lease/leaderLease.ts';
import { loadAutonomyConfig } from './autonomy/config.ts';
import { autonomyExtensionsOf, createAutonomyEngine, startFleetSensors } from './autonomy/wiring.ts';
import { startAgentPresence } from '../agents/agentPresence.ts';
import { AggregateRepository } from '../platform/commands/aggregateRepository.ts';

export interface RunningService {
  stop(): Promise<void>;
  /** Resolves if the service stopped working on its own (its consume loop ended): `serve` then exits non-zero. */
  readonly failure?: Promise<Error>;
}

type ServiceFactory = (runtime: Runtime) => Promise<RunningService>;

const readerOf = (dataDir: string, name: string) => new ReadModelReader(new ReadModelFiles(dataDir, name));

/** A `CommandSender` on an in-process bus: how a service runs the commands that are never served over NATS. */
/**
 * Builds one read model on a durable of its own (`projector_<name>`) and answers `bc.ctl.projector.<name>.*`: a read
 * model kept apart from `projectors` (which must then not run in the same deployment, or both write its file).
 */
function projectorService(name: string): ServiceFactory {
  const projection = allProjections.find((p) => p.name === name)!;
  return async ({ config, nc, store, log }) => {
    const projector = new Projector(store, projection, new ReadModelFiles(config.dataDir, name), log.child({ projector: name }));
    await projector.start();
    const control = serveProjectorControl(nc, projector);
    return {
      stop: async () => {
        for (const sub of control) sub.unsubscribe();
        await projector.stop();
      },
    };
  };
}

/**
 * Builds every read model from one durable (`projectors`): each event is decoded and authenticated once, applied to
 * each read model's own file, and answers `bc.ctl.projector.<name>.*` for each.
 */
const projectorsService: ServiceFactory = async ({ config, nc, store, log }) => {
  const readModels = allProjections.map((projection) => ({ projection, files: new ReadModelFiles(config.dataDir, projection.name) }));
  const group = new ProjectorGroup(store, readModels, log.child({ service: 'projectors' }));
  await group.start();
  const control = group.members.flatMap((member) => serveProjectorControl(nc, member));
  return {
    stop: async () => {
      for (const sub of control) sub.unsubscribe();
      await group.stop();
    },
  };
};

/**
 * A service that must have one active instance: it runs only while this process holds its leader lease, stamped
 * with the lease's term, and is stopped when the lease is lost (the process then stands by and campaigns again).
 * Any number of replicas may run; the others wait.
 */
function leased(service: LeasedService, start: (runtime: Runtime, lease: LeaseTerm) => Promise<RunningService>): ServiceFactory {
  return async (runtime) => {
    const lease = new LeaderLease(runtime.nc, { service, leaseMs: runtime.config.leaseMs }, runtime.log.child({ lease: service }));
    let fail: (err: Error) => void = () => undefined;
    const failure = new Promise<Error>((resolve) => (fail = resolve));
    lease.run((term) => start(runtime, term), fail);
    return { stop: () => lease.stop(), failure };
  };
}

/** Every service a process can run, by the name `serve` takes. */
export const serviceCatalog: Record<string, ServiceFactory> = {
  // The process's bus; what is served on `bc.cmd.>` is decided by each command's exposure.
  commands: async ({ nc, bus, commands, log }) => {
    const sub = serveCommands(nc, bus, log, new Set(busCommands.map((c) => c.name)));
    // This process's own engine commands (the orchestrator's, under the compact layout) are decided here too.
    const backToNats = commands.serveLocally(sub.local);
    return {
      stop: async () => {
        backToNats();
        sub.unsubscribe();
      },
    };
  },
  api: async ({ config, nc, store, bus, log }) => {
    const readers = new Map(allProjections.map((p) => [p.name, new ReadModelReader(new ReadModelFiles(config.dataDir, p.name))]));
    const app = await buildApi({ config, nc, store, bus, readers, metrics: createMetrics() }, log);
    await app.listen({ port: config.httpPort, host: config.httpHost });
    return {
      stop: async () => {
        await app.close();
        for (const r of readers.values()) r.close();
      },
    };
  },
  join: async ({ config, nc, store, bus, log }) => {
    const material = config.natsAuth === 'operator' ? await loadOrCreateBrokerMaterial(brokerDirOf(config)) : undefined;
    const joins = startJoinService(nc, store, log.child({ service: 'join' }), { ...(material ? { broker: { material } } : {}), bus });
    const bootTokens = startBootTokenService(nc, store, log.child({ service: 'join' }), { bus });
    const registrations = startRegistrationService(nc, store, log.child({ service: 'join' }), { bus });
    return {
      stop: async () => {
        await joins.stop();
        await bootTokens.stop();
        await registrations.stop();
      },
    };
  },
  'secret-grants': async ({ config, nc, store, log }) =>
    startGrantService(nc, store, loadMasterKey(config), log.child({ service: 'secret-grants' }), { natsAuth: config.natsAuth }),
  'bmc-monitor': leased('bmc-monitor', async ({ config, nc, store, log }, lease) => {
    const nodes = new ReadModelReader(new ReadModelFiles(config.dataDir, 'nodes'));
    const monitor = new BmcMonitor(nc, store, nodes, loadBmcMonitorConfig(), log.child({ service: 'bmc-monitor' }), lease);
    await monitor.start();
    return {
      stop: async () => {
        await monitor.stop();
        nodes.close();
      },
    };
  }),
  // Sensors over a snapshot of the read models every BC_SENSOR_TICK_MS; signals and pass markers on BC_SIGNALS. One
  // active instance: a second would publish every pass twice.
  'fleet-sensors': leased('fleet-sensors', async ({ config, nc, store, log }) => {
    const readers = {
      nodes: readerOf(config.dataDir, 'nodes'),
      workflows: readerOf(config.dataDir, 'workflows'),
      vps: readerOf(config.dataDir, 'vps'),
      agents: readerOf(config.dataDir, 'agents'),
      modules: readerOf(config.dataDir, 'modules'),
    };
    const extensions = autonomyExtensionsOf(await loadPluginModules(config.plugins));
    // Heard from the moment this instance leads: a host's silence is measured from then at the earliest.
    const presence = startAgentPresence(nc, { repository: new AggregateRepository(store), windowMs: config.agentPresenceWindowMs, log });
    const sensors = startFleetSensors(nc, readers, loadAutonomyConfig(), log.child({ service: 'fleet-sensors' }), extensions, presence);
    return {
      stop: async () => {
        await sensors.stop();
        await presence.stop();
        for (const r of Object.values(readers)) r.close();
      },
    };
  }),
  // Replicas share the pass markers' durable; every command id is derived from decision, episode and step.
  'autonomy-engine': async ({ config, nc, store, log }) => {
    const extensions = autonomyExtensionsOf(await loadPluginModules(config.plugins));
    const engine = createAutonomyEngine(nc, store, loadAutonomyConfig(), log.child({ service: 'autonomy-engine' }), {}, extensions);
    await engine.start();
    return engine;
  },
  'workflow-orchestrator': leased('workflow-orchestrator', async ({ nc, store, commands, log }, lease) => {
    const orchestrator = new WorkflowOrchestrator(nc, store, loadWorkflowConfig(), log.child({ service: 'workflow-orchestrator' }), lease, commands);
    await orchestrator.start();
    return orchestrator;
  }),
  'workflow-executor': async ({ config, nc, store, bus, log }) => {
    const executor = new WorkflowExecutor(nc, store, loadWorkflowConfig(), log.child({ service: 'workflow-executor' }), {
      bus,
      masterKey: loadMasterKey(config),
      blobBaseUrl: publicUrlOf(config),
      agentEndpoints: agentEndpointsOf(config),
      natsAuth: config.natsAuth,
    });
    await executor.start();
    return executor;
  },
  // Holds the master key: it opens provider account tokens to build clients from the plugins in BC_PLUGINS. Metal pools:
  // places instances on the site's nodes and sends their hosts `instance.apply`/`instance.remove`, hearing heartbeats.
  'vps-reconciler': leased('vps-reconciler', async ({ config, nc, store, commands, log }, lease) => {
    const providers = providersOf(await loadPluginModules(config.plugins));
    // Metal pools: instances are placed on the site's nodes as the nodes read model shows them.
    const nodes = readerOf(config.dataDir, 'nodes');
    const reconciler = new VpsReconciler(nc, store, loadReconcilerConfig(), log.child({ service: 'vps-reconciler' }), {
      providers,
      tokens: sealedProviderTokens(store, loadMasterKey(config)),
      lease,
      commands,
      nodes,
      presenceWindowMs: config.agentPresenceWindowMs,
    });
    await reconciler.start();
    log.info({ providers: [...providers.keys()] }, 'vps reconciler running');
    return {
      failure: reconciler.failure,
      stop: async () => {
        await reconciler.stop();
        nodes.close();
      },
    };
  }),
  // Rollouts (issue 35): waves started, `module.apply` sent to hosts, their verified heartbeats recorded as outcomes.
  'rollout-controller': leased('rollout-controller', async ({ config, nc, store, commands, log }, lease) => {
    const controller = new RolloutController(nc, store, loadRolloutControllerConfig(), log.child({ service: 'rollout-controller' }), {
      blobBaseUrl: publicUrlOf(config),
      lease,
      commands,
    });
    await controller.start();
    return controller;
  }),
  // The plugins the deployment's config names (BC_PLUGINS), each registered and serving its own work subjects.
  plugins: async ({ config, log }) => {
    const running: RunningPlugin[] = [];
    for (const plugin of await loadPluginModules(config.plugins)) running.push(await runPlugin(plugin, { config }));
    log.info({ plugins: config.plugins }, 'plugins running');
    return { stop: async () => void (await Promise.all(running.map((p) => p.stop()))) };
  },
  projectors: projectorsService,
  ...Object.fromEntries(allProjections.map((p) => [`projector:${p.name}`, projectorService(p.name)])),
};
