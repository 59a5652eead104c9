import { setTimeout as sleep } from 'node:timers/promises';
import { moduleReportVerdict, type HostModuleReport } from '../../schemas/agent/hostModules.ts';
import type { ClosurePlan } from '../../schemas/fleet/closure.ts';
import type { ModuleVersionView } from '../../schemas/fleet/views.ts';
import type { NodeView } from '../../schemas/metal/views.ts';
import type { ApiClient } from './apiClient.ts';

/** Exit codes of `assignments apply --follow`: 0 every module of the plan reported active and healthy, 3 one did not. */
export const PLAN_APPLY_EXIT = { healthy: 0, unhealthy: 3 } as const;

/**
 * Follows a plan's apply by reading the host (`GET /v1/nodes/:nodeId`: its latest verified heartbeat) every `pollMs`
 * until it reports every module of `plan` at its version, settled (`moduleReportVerdict`: the probes the published
 * version declares reported, as the rollout controller judges it); one line per module as it settles. Resolves the
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
  const published = new Map<string, ModuleVersionView>();
  for (const [module, version] of Object.entries(plan)) {
    const view = await api.get<{ versions: ModuleVersionView[] }>(`/v1/modules/${encodeURIComponent(module)}`);
    const found = view.versions.find((v) => v.version === version);
    if (!found) throw new Error(`${module} ${version} is not published`);
    published.set(module, found);
  }
  const verdictOf = (module: string, report: HostModuleReport | undefined) => {
    const version = published.get(module)!;
    if (report === undefined || report.version !== version.version) return undefined;
    return moduleReportVerdict(
      report,
      version.manifest.probes.map((p) => p.name),
      version.manifestSha256,
    );
  };
  const seen = new Map<string, { verdict: 'healthy' | 'failed'; report: HostModuleReport }>();
  for (;;) {
    const node = await api.get<NodeView>(`/v1/nodes/${encodeURIComponent(nodeId)}`);
    const reports = new Map((node.lastHeartbeat?.modules ?? []).map((m) => [m.name, m] as const));
    for (const [module, version] of Object.entries(plan)) {
      const report = reports.get(module);
      const verdict = seen.has(module) ? undefined : verdictOf(module, report);
      if (verdict === undefined || report === undefined) continue;
      seen.set(module, { verdict, report });
      const failed = report.probes.filter((p) => !p.ok).map((p) => p.name);
      write(`${new Date().toISOString()} ${nodeId}: ${module} ${version} ${report.state}${failed.length > 0 ? ` (failed probes: ${failed.join(', ')})` : ''}`);
    }
    if (seen.size === Object.keys(plan).length) {
      const settled = [...seen.values()];
      return { modules: settled.map((s) => s.report), healthy: settled.every((s) => s.verdict === 'healthy') };
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
