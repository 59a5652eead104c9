import type { HostModuleReport } from '../../../schemas/agent/hostModules.ts';
import type { Signal } from '../../../schemas/autonomy/signals.ts';
import type { SnapshotNode } from '../../../schemas/autonomy/snapshot.ts';
import { defineSensor } from './sensor.ts';

const age = (now: string, since: string) => Date.parse(now) - Date.parse(since);
const short = (digest: string) => digest.slice(0, 12);
/** By module name: the signal is the same whatever order the heartbeat or the plan listed its modules in. */
const byName = <T extends { name: string }>(items: readonly T[]): T[] => [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

type ModuleSignalKind = 'module-drift' | 'module-verify-failed' | 'module-never-reported';

/** One signal per host and kind: its key is the node, `facts.modules` the modules concerned (comma-separated). */
function hostSignal(node: SnapshotNode, kind: ModuleSignalKind, modules: readonly string[], parts: readonly string[]): Signal {
  return {
    kind,
    sensor: 'host-modules',
    key: node.nodeId,
    target: { type: 'node', id: node.nodeId },
    siteId: node.siteId,
    detail: parts.join('; ').slice(0, 400),
    facts: { modules: modules.join(',').slice(0, 200) },
    controlPlane: node.controlPlane,
  };
}

/** What failed in a reported module: its failed probes by name, or its state alone (the list was cut to fit the heartbeat). */
function failureOf(report: HostModuleReport): string {
  const failed = report.probes.filter((p) => !p.ok).map((p) => p.name);
  return `${report.name} ${report.version}: ${failed.length > 0 ? `probe ${failed.join(', ')} failed` : 'failed'}`;
}

/**
 * The modules of deployed hosts running `bcd node`, compared with what their assignment pins (`modules` read model)
 * and what their last verified heartbeat reported:
 *
 * - `module-verify-failed`: a reported module whose probes failed (state `failed`). A bundle whose files fail
 *   verification never becomes `current` (the host refuses it whole), so it shows as drift, not here.
 * - `module-drift`: once the plan is older than `moduleReportGraceMs`, a pinned module reported at another version or
 *   manifest digest, or a module reported that the plan does not pin (left behind by an unpin).
 * - `module-never-reported`: a pinned module the host's last heartbeat does not list, or a host never heard at all,
 *   once the plan, the deploy and the listening are all older than the grace. Absence is not health.
 *
 * With no heartbeats listened to, nothing about hosts with a pinned plan is known: the sensor fails (its pass concludes
 * nothing) rather than report them all healthy.
 */
export const hostModulesSensor = defineSensor({
  name: 'host-modules',
  emits: ['module-drift', 'module-verify-failed', 'module-never-reported'],
  assess(snapshot, settings) {
    const hosts = snapshot.nodes.filter((n) => n.state === 'deployed' && n.agent === 'bcd');
    const plans = new Map(snapshot.assignments.map((a) => [a.nodeId, a]));
    const since = snapshot.heartbeatsSince;
    if (since === null) {
      const pinned = hosts.filter((n) => (plans.get(n.nodeId)?.modules.length ?? 0) > 0).length;
      if (pinned > 0) throw new Error(`no heartbeats are listened to: the modules of ${pinned} host(s) with a pinned plan are unknown`);
      return { assessed: 0, signals: [] };
    }
    const heard = new Map(snapshot.heartbeats.filter((h) => h.role === 'node').map((h) => [h.nodeId, h]));
    const signals: Signal[] = [];
    for (const n of hosts) {
      const last = heard.get(n.nodeId);
      const reported = new Map(byName(last?.modules ?? []).map((r) => [r.name, r]));

      const failed = [...reported.values()].filter((r) => r.state === 'failed' || r.probes.some((p) => !p.ok));
      if (failed.length > 0) {
        signals.push(
          hostSignal(
            n,
            'module-verify-failed',
            failed.map((r) => r.name),
            failed.map(failureOf),
          ),
        );
      }

      const plan = plans.get(n.nodeId);
      if (!plan) continue;
      const pins = byName(plan.modules);
      const pinned = new Map(pins.map((p) => [p.name, p]));
      const planSettled = age(snapshot.at, plan.assignedAt) > settings.moduleReportGraceMs;

      if (last && planSettled) {
        const drifted: string[] = [];
        const parts: string[] = [];
        for (const p of pins) {
          const r = reported.get(p.name);
          if (!r || (r.version === p.version && (p.digest === null || r.digest === p.digest))) continue;
          drifted.push(p.name);
          parts.push(`${p.name} ${r.version} (${short(r.digest)}) reported, ${p.version}${p.digest ? ` (${short(p.digest)})` : ''} pinned`);
        }
        for (const r of reported.values()) {
          if (pinned.has(r.name)) continue;
          drifted.push(r.name);
          parts.push(`${r.name} ${r.version} reported, not pinned`);
        }
        if (drifted.length > 0) signals.push(hostSignal(n, 'module-drift', drifted, parts));
      }

      const missing = pins.filter((p) => !reported.has(p.name));
      const waited = Math.min(age(snapshot.at, since), age(snapshot.at, plan.assignedAt), age(snapshot.at, n.updatedAt));
      if (missing.length > 0 && waited > settings.moduleReportGraceMs) {
        const heardNote = last ? `its last heartbeat (${last.heardAt}) does not list it` : 'no heartbeat heard';
        signals.push(
          hostSignal(
            n,
            'module-never-reported',
            missing.map((p) => p.name),
            [`${missing.map((p) => `${p.name} ${p.version}`).join(', ')} pinned and not reported for ${Math.round(waited / 1000)} s: ${heardNote}`],
          ),
        );
      }
    }
    return { assessed: hosts.length, signals };
  },
});
