import type { NatsConnection } from '@nats-io/transport-node';
import type { PolicyDeclaration } from '../../../schemas/autonomy/policies.ts';
import type { PluginDefinition } from '../../../plugins/sdk/definePlugin.ts';
import { firstLaneBindings, type Binding } from '../../autonomy/bindings.ts';
import { builtinPolicies, PolicyCatalog } from '../../autonomy/policies.ts';
import { firstLaneSensors } from '../../autonomy/sensors/firstLanes.ts';
import type { Sensor } from '../../autonomy/sensors/sensor.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import type { AgentPresenceView } from '../../agents/agentPresence.ts';
import type { AutonomyConfig } from './config.ts';
import { AutonomyEngine, type AutonomyEngineOptions } from '../../processes/autonomyEngine/engine.ts';
import { FleetSensors } from '../../processes/fleetSensors/fleetSensors.ts';
import { readSnapshot, type SnapshotSources } from '../../processes/fleetSensors/snapshotReader.ts';

/** What the plugins in `BC_PLUGINS` bring to fleet autonomy: their sensors, bindings and declared categories. */
export interface AutonomyExtensions {
  readonly sensors: readonly Sensor[];
  readonly bindings: readonly Binding[];
  readonly policies: readonly PolicyDeclaration[];
}

export const noExtensions: AutonomyExtensions = { sensors: [], bindings: [], policies: [] };

/** The plugins' autonomy parts, in plugin order (a module built with an older SDK brings none). */
export function autonomyExtensionsOf(plugins: readonly Partial<Pick<PluginDefinition, 'sensors' | 'bindings' | 'policies'>>[]): AutonomyExtensions {
  return {
    sensors: plugins.flatMap((p) => p.sensors ?? []),
    bindings: plugins.flatMap((p) => p.bindings ?? []),
    policies: plugins.flatMap((p) => p.policies ?? []),
  };
}

/** The first lanes' sensors and the plugins' over the given read models and heard heartbeats, ticking every `tickMs`. */
export function createFleetSensors(
  nc: NatsConnection,
  sources: SnapshotSources,
  config: AutonomyConfig,
  log: Logger,
  extensions: AutonomyExtensions = noExtensions,
  presence?: AgentPresenceView,
): FleetSensors {
  const settings = {
    bmcFailuresBeforeSignal: config.bmcFailuresBeforeSignal,
    overdueFactor: config.overdueFactor,
    staleQueueMs: config.staleQueueMs,
    keyRotationAgeMs: config.keyRotationAgeMs,
    keyRotationStallMs: config.keyRotationStallMs,
    hostSilentMs: config.hostSilentMs,
    moduleReportGraceMs: config.moduleReportGraceMs,
  };
  return new FleetSensors(
    nc,
    {
      sensors: [...firstLaneSensors, ...extensions.sensors],
      settings,
      tickMs: config.tickMs,
      snapshot: (now) =>
        readSnapshot(nc, sources, {
          now,
          stepTimeoutMs: config.stepTimeoutMs,
          controlPlaneNodes: config.controlPlaneNodes,
          ...(presence ? { presence } : {}),
        }),
    },
    log,
  );
}

export function startFleetSensors(
  nc: NatsConnection,
  sources: SnapshotSources,
  config: AutonomyConfig,
  log: Logger,
  extensions: AutonomyExtensions = noExtensions,
  presence?: AgentPresenceView,
): FleetSensors {
  const sensors = createFleetSensors(nc, sources, config, log, extensions, presence);
  sensors.start();
  return sensors;
}

/**
 * The engine with the first lanes' policies, bindings and sensors and the plugins' (the start-up check runs in its
 * constructor: a plugin binding whose signal no sensor emits, or whose category nobody declares, stops the start).
 */
export function createAutonomyEngine(
  nc: NatsConnection,
  store: EventStore,
  config: AutonomyConfig,
  log: Logger,
  extra: Partial<AutonomyEngineOptions> = {},
  extensions: AutonomyExtensions = noExtensions,
): AutonomyEngine {
  return new AutonomyEngine(
    nc,
    store,
    {
      policies: new PolicyCatalog([...builtinPolicies, ...extensions.policies]),
      bindings: [...firstLaneBindings, ...extensions.bindings],
      sensors: [...firstLaneSensors, ...extensions.sensors],
      settleMs: config.settleMs,
      budget: config.budget,
      budgetWindowMs: config.budgetWindowMs,
      ...extra,
    },
    log,
  );
}
