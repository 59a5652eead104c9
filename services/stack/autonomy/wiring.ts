import type { NatsConnection } from '@nats-io/transport-node';
import { firstLaneBindings } from '../../autonomy/bindings.ts';
import { PolicyCatalog } from '../../autonomy/policies.ts';
import { firstLaneSensors } from '../../autonomy/sensors/firstLanes.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import type { AutonomyConfig } from './config.ts';
import { AutonomyEngine, type AutonomyEngineOptions } from './engine.ts';
import { FleetSensors } from './fleetSensors.ts';
import { readSnapshot, type SnapshotSources } from './snapshotReader.ts';

/** The first lanes' sensors over the given read models, ticking every `tickMs`. */
export function createFleetSensors(nc: NatsConnection, sources: SnapshotSources, config: AutonomyConfig, log: Logger): FleetSensors {
  const settings = {
    bmcFailuresBeforeSignal: config.bmcFailuresBeforeSignal,
    overdueFactor: config.overdueFactor,
    staleQueueMs: config.staleQueueMs,
    keyRotationAgeMs: config.keyRotationAgeMs,
  };
  return new FleetSensors(
    nc,
    {
      sensors: firstLaneSensors,
      settings,
      tickMs: config.tickMs,
      snapshot: (now) => readSnapshot(nc, sources, { now, stepTimeoutMs: config.stepTimeoutMs, controlPlaneNodes: config.controlPlaneNodes }),
    },
    log,
  );
}

export function startFleetSensors(nc: NatsConnection, sources: SnapshotSources, config: AutonomyConfig, log: Logger): FleetSensors {
  const sensors = createFleetSensors(nc, sources, config, log);
  sensors.start();
  return sensors;
}

/** The engine with the first lanes' policies, bindings and sensors (the start-up check runs in its constructor). */
export function createAutonomyEngine(
  nc: NatsConnection,
  store: EventStore,
  config: AutonomyConfig,
  log: Logger,
  extra: Partial<AutonomyEngineOptions> = {},
): AutonomyEngine {
  return new AutonomyEngine(
    nc,
    store,
    {
      policies: new PolicyCatalog(),
      bindings: firstLaneBindings,
      sensors: firstLaneSensors,
      settleMs: config.settleMs,
      budget: config.budget,
      budgetWindowMs: config.budgetWindowMs,
      ...extra,
    },
    log,
  );
}
