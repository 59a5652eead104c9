import type { SensorReport, Signal } from '../../../schemas/autonomy/signals.ts';
import type { FleetSnapshot } from '../../../schemas/autonomy/snapshot.ts';
import type { Sensor, SensorSettings } from './sensor.ts';

export interface PassResult {
  readonly signals: readonly Signal[];
  readonly reports: readonly SensorReport[];
}

const order = (a: Signal, b: Signal) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Runs every sensor over one snapshot. A sensor that throws is reported as failed and its signals (none) are left
 * out; the others' signals still count. Signals come out ordered by kind and key, one per kind and key, so the same
 * snapshot gives the same signals whatever order its rows came in.
 */
export function runPass(sensors: readonly Sensor[], snapshot: FleetSnapshot, settings: SensorSettings): PassResult {
  const reports: SensorReport[] = [];
  const byKey = new Map<string, Signal>();
  for (const sensor of sensors) {
    let result: ReturnType<Sensor['assess']>;
    try {
      result = sensor.assess(snapshot, settings);
    } catch (err) {
      reports.push({ sensor: sensor.name, ok: false, error: String(err instanceof Error ? err.message : err).slice(0, 400) });
      continue;
    }
    const own = result.signals.filter((s) => s.sensor === sensor.name && sensor.emits.includes(s.kind));
    for (const s of own) {
      const id = `${s.kind}\n${s.key}`;
      const seen = byKey.get(id);
      // Two rows about one key (e.g. one site's several waiting nodes): keep the lexically greatest, independent of order.
      if (!seen || JSON.stringify(s) > JSON.stringify(seen)) byKey.set(id, s);
    }
    reports.push({ sensor: sensor.name, ok: true, assessed: result.assessed, signals: own.length });
  }
  return { signals: [...byKey.values()].sort(order), reports };
}
