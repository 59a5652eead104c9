import type { Config } from '../platform/config.ts';

export type ProcessLayout = Config['processLayout'];

/**
 * The services every step passes through: a step's messages go from one to the next (append, deliver, work, claim,
 * command, fold), so in processes of their own each message wakes another process and crosses the loopback socket once
 * more. Sharing one process, they share its event loop, its NATS connection (one socket write carries what several of
 * them send in one turn) and its aggregate cache. In the fleet bench that cut their CPU per step by a third (bench/README.md).
 */
export const stepPathServices = ['projectors', 'commands', 'join', 'workflow-orchestrator', 'workflow-executor'] as const;
const stepPath: ReadonlySet<string> = new Set(stepPathServices);

/**
 * What `npm start` runs, one group per process in the `split` layout, in start order (projectors first: commands wait
 * for their read-your-writes; the fleet's control loops (sensors, engine, rollouts) share one; plugins only when `BC_PLUGINS` names some).
 */
export function stackServiceGroups(withPlugins: boolean): string[][] {
  return [
    ['projectors'],
    ['commands'],
    ['secret-grants'],
    ['join'],
    ['workflow-orchestrator'],
    ['workflow-executor'],
    ['bmc-monitor'],
    ['vps-reconciler'],
    ['fleet-sensors', 'autonomy-engine', 'rollout-controller'],
    ['api'],
    ...(withPlugins ? [['plugins']] : []),
  ];
}

/**
 * The process groups to run, in start order. `split` keeps the groups as given. `compact` merges every group made
 * only of step-path services into one process, started first (projectors before the services whose commands wait for
 * them). The rest keep processes of their own: the API, so a request's latency does not wait behind a busy step path;
 * the services that call out to BMCs and providers (`bmc-monitor`, `vps-reconciler`), whose slow peers must not stall
 * steps; plugins and the simulated site, which are other programs' code. A crash in the shared process restarts all of
 * its services, which resume from their durables like any restarted process.
 */
export function processGroups(layout: ProcessLayout, groups: readonly (readonly string[])[]): string[][] {
  if (layout === 'split') return groups.map((group) => [...group]);
  const onStepPath = (group: readonly string[]) => group.every((service) => stepPath.has(service));
  const shared = groups.filter(onStepPath).flat();
  const apart = groups.filter((group) => !onStepPath(group)).map((group) => [...group]);
  return shared.length > 0 ? [shared, ...apart] : apart;
}
