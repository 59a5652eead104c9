import type { FleetSnapshot } from '../../schemas/autonomy/snapshot.ts';
import type { Signal } from '../../schemas/autonomy/signals.ts';

/** Thresholds sensors use; from the environment in `fleet-sensors` (see docs/autonomy.md), fixed in tests. */
export interface SensorSettings {
  /** Failed BMC reads in a row before a node counts as unreachable (the monitor's hysteresis, default 3). */
  bmcFailuresBeforeSignal: number;
  /** A running step is overdue once it ran this many times its timeout. */
  overdueFactor: number;
  /** Work waiting for capacity longer than this is an old queue. */
  staleQueueMs: number;
  /** Agent keys older than this should be rotated. */
  keyRotationAgeMs: number;
  /** A rotation asked for this long ago and not carried out is stalled (the agent asks every 10 minutes). */
  keyRotationStallMs: number;
  /** A deployed host whose `bcd node` has not heartbeated for this long (since it was deployed, at the earliest) is silent. */
  hostSilentMs: number;
  /**
   * How long a host has to apply its pinned plan and report it, counted from the plan's assignment (and from the
   * deploy and from when heartbeats were first listened to, for a module never reported): past it, a pinned module
   * reported at another version or digest drifted, and one not reported at all was never reported.
   */
  moduleReportGraceMs: number;
}

export const defaultSensorSettings: SensorSettings = {
  bmcFailuresBeforeSignal: 3,
  overdueFactor: 3,
  staleQueueMs: 30 * 60_000,
  keyRotationAgeMs: 90 * 24 * 3_600_000,
  keyRotationStallMs: 30 * 60_000,
  hostSilentMs: 3 * 60_000,
  moduleReportGraceMs: 10 * 60_000,
};

/**
 * A sensor: a pure function of the fleet snapshot (read models and the latest observations). `emits` names the signal
 * kinds it can produce, so the start-up check can refuse a binding no sensor feeds. `assessed` is how many things it
 * looked at (the pass marker's coverage). A sensor that throws is reported failed in its pass and never hides the
 * others' signals; signals it did not declare in `emits`, or that name another sensor, are dropped.
 */
export interface Sensor {
  readonly name: string;
  readonly emits: readonly string[];
  assess(snapshot: FleetSnapshot, settings: SensorSettings): { assessed: number; signals: Signal[] };
}

/** A sensor, frozen. Plugins list theirs in `definePlugin({ sensors })`; `fleet-sensors` runs them beside the built-in ones. */
export const defineSensor = (sensor: Sensor): Sensor => Object.freeze(sensor);
