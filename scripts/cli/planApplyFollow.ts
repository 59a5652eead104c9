import { setTimeout as sleep } from 'node:timers/promises';
import type { HostModuleReport } from '../../schemas/agent/hostModules.ts';
import type { ClosurePlan } from '../../schemas/fleet/closure.ts';
import type { NodeView } from '../../schemas/metal/views.ts';
import type { ApiClient } from './apiClient.ts';

/** Exit codes of `assignments apply --follow`: 0 every module of the plan reported active and healthy, 3 one did not. */
export const PLAN_APPLY_EXIT = { healthy: 0, unhealthy: 3 } as const;

/** A host's report of `version`, once it is past `pending` (what the host says after it switched and probed). */
const settled = (report: HostModuleReport | undefined, version: string): report is HostModuleReport =>
  report !== undefined && report.version === version && report.state !== 'pending';
const healthy = (report: HostModuleReport): boolean => report.state === 'active' && report.probes.every((p) => p.ok);

/**
 * Follows a plan's apply by reading the host (`GET /v1/nodes/:nodeId`: its latest verified heartbeat) every `pollMs`
 * until it reports every module of `plan` at its version, settled; one line per module as it settles. Resolves the
 * reports and whether all are healthy; throws past `timeoutMs` (a host that never takes the command).
 */
export async function followPlanApply(
  api: ApiClient,
  nodeId: string,
  plan: ClosurePlan,
  write: (line: string) => void,
  options: { pollMs?: number; timeoutMs?: number } = {},
): Promise<{ modules: HostModuleReport[]; healthy: boolean }> {
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  const seen = new Set<string>();
  for (;;) {
    const node = await api.get<NodeView>(`/v1/nodes/${encodeURIComponent(nodeId)}`);
    const reports = new Map((node.lastHeartbeat?.modules ?? []).map((m) => [m.name, m] as const));
    for (const [module, version] of Object.entries(plan)) {
      const report = reports.get(module);
      if (!settled(report, version) || seen.has(module)) continue;
      seen.add(module);
      const failed = report.probes.filter((p) => !p.ok).map((p) => p.name);
      write(`${new Date().toISOString()} ${nodeId}: ${module} ${version} ${report.state}${failed.length > 0 ? ` (failed probes: ${failed.join(', ')})` : ''}`);
    }
    if (seen.size === Object.keys(plan).length) {
      const modules = Object.keys(plan).map((module) => reports.get(module)!);
      return { modules, healthy: modules.every(healthy) };
    }
    if (Date.now() > deadline)
      throw new Error(
        `${nodeId} still does not report ${Object.keys(plan)
          .filter((m) => !seen.has(m))
          .join(', ')} after the wait limit`,
      );
    await sleep(options.pollMs ?? 500);
  }
}
