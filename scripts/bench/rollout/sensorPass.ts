import type { HostModuleObservation } from '../../../schemas/agent/hostModuleObservation.ts';
import { emptyFleetSnapshot, type FleetSnapshot } from '../../../schemas/autonomy/snapshot.ts';
import { hostModulesSensor } from '../../../services/autonomy/sensors/hostModules.ts';
import { defaultSensorSettings } from '../../../services/autonomy/sensors/sensor.ts';

/**
 * One pass of the `host-modules` sensor over a snapshot of the bench's hosts: each deployed, running `bcd node`, pinned
 * to `pin`, with the last heartbeat the controller verified from it (its real module report). Timed over `passes`
 * passes (median and slowest), and the hosts it flags.
 */
export function timeSensorPass(
  hosts: readonly string[],
  siteId: string,
  latest: ReadonlyMap<string, HostModuleObservation>,
  pin: { module: string; version: string; digest: string },
  passes: number,
): { hosts: number; msMedian: number; msMax: number; flagged: string[] } {
  const now = new Date();
  const long = new Date(now.getTime() - 3_600_000).toISOString();
  const snapshot: FleetSnapshot = {
    ...emptyFleetSnapshot(now.toISOString()),
    nodes: hosts.map((nodeId) => ({
      nodeId,
      siteId,
      state: 'deployed',
      maintenance: false,
      maintenanceSource: null,
      failure: null,
      waitingReason: null,
      updatedAt: long,
      agent: 'bcd' as const,
      controlPlane: false,
    })),
    heartbeatsSince: long,
    heartbeats: [...latest.values()].map((o) => ({
      nodeId: o.host,
      agentId: `node-${o.host}`,
      role: 'node' as const,
      heardAt: new Date(o.at).toISOString(),
      modules: [{ name: o.module, version: o.version, digest: o.digest, state: o.state, probes: o.probes }],
    })),
    assignments: hosts.map((nodeId) => ({
      nodeId,
      assignedAt: long,
      planDigest: 'bench',
      modules: [{ name: pin.module, version: pin.version, digest: pin.digest }],
    })),
  };
  const times: number[] = [];
  let flagged: string[] = [];
  for (let i = 0; i < passes; i++) {
    const t0 = process.hrtime.bigint();
    const result = hostModulesSensor.assess(snapshot, defaultSensorSettings);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    flagged = [...new Set(result.signals.map((s) => s.key))].sort();
  }
  times.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return { hosts: hosts.length, msMedian: round(times[Math.floor(times.length / 2)]!), msMax: round(times.at(-1)!), flagged };
}
