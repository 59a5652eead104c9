import { isDeepStrictEqual } from 'node:util';
import { idFor } from '../../../schemas/ids.ts';
import type { Effect } from '../../platform/processManager/processManager.ts';
import { observe, releaseQuota, type ConvergeTask, type ReconcilerCommand } from './effects.ts';
import type { HostReports } from './hostReports.ts';
import { isAtRest, type ReconciledInstance } from './model.ts';

type Effects = readonly Effect<ConvergeTask>[];

const step = (instance: ReconciledInstance, s: 'place' | 'apply' | 'remove' | 'relocate'): Effect<ConvergeTask> => ({
  kind: 'task',
  task: { converge: instance.key, step: s },
});

/** The capacity goes back to the site's book once the host removed the instance (derived id: once per instance). */
export const unplace = (instance: ReconciledInstance, siteId: string): ReconcilerCommand => ({
  kind: 'command',
  name: 'vps.unplaceInstance',
  payload: { siteId, tenantId: instance.tenantId, instanceId: instance.instanceId },
  commandId: idFor('unplace', instance.key),
});

/** Gone for good: recorded (with no address: the host removed it), its node's capacity freed, its quota given back. */
const gone = (instance: ReconciledInstance): Effects => [
  observe(instance, 'deleted', { addresses: [] }, idFor('observe-deleted', instance.key)),
  ...(instance.placement ? [unplace(instance, instance.placement.siteId)] : []),
  releaseQuota(instance),
];

/**
 * One pass over an instance of a metal pool, on the model as it is now (`now`: this process's clock). It is placed
 * first (`place`: `vps.placeInstance` on the site's book); then its host's `bcd node` is asked to converge it
 * (`instance.apply` with the desired state, `instance.remove` on delete), and what the host's verified heartbeats say
 * of it on that node, and only that node, is what gets recorded: `running` with its addresses, `stopped`, or `error`
 * with the runtime's message. A command is sent again after `resendMs` without the host showing the result (a host
 * that was down, a command past its deadline). Deleted once a heartbeat heard after the remove went out no longer lists
 * it (a host that never listed it: one heard `resendMs` after), then the capacity is freed and the quota released.
 */
export function planMetalPass(instance: ReconciledInstance, hosts: HostReports, now: number, resendMs: number, polledAt?: number): Effects {
  const { placement, desired } = instance;
  if (instance.released || instance.refused || instance.held === true) return [];
  // A poll queued behind the pass that brought the instance to rest.
  if (polledAt !== undefined && isAtRest(instance)) return [];
  if (instance.observed === 'deleted') return [...(placement ? [unplace(instance, placement.siteId)] : []), releaseQuota(instance)];
  // Its node is lost: placed again elsewhere first (`vps.relocateInstance`), whatever else is asked of it.
  if (instance.relocation && placement?.nodeId === instance.relocation.fromNodeId) return [step(instance, 'relocate')];
  if (instance.observed === 'error' && desired !== 'deleted') return [];
  if (instance.observed === null) {
    if (desired === 'deleted') return gone(instance);
    const provisioning = observe(instance, 'provisioning', {}, idFor('observe-provisioning', instance.key));
    return [{ ...provisioning, ifRefused: (refusal) => (refusal.code === 'ALREADY_EXISTS' ? [releaseQuota(instance)] : undefined) }, step(instance, 'place')];
  }
  if (!placement) return desired === 'deleted' ? gone(instance) : [step(instance, 'place')];

  const heard = hosts.reportFor(placement.nodeId, instance.instanceId);
  const exchange = instance.host ?? {};
  if (desired === 'deleted') {
    const sentAt = exchange.removeSentAt;
    const removed =
      sentAt !== undefined &&
      heard !== undefined &&
      heard.at > sentAt &&
      heard.report === undefined &&
      (exchange.seen === true || heard.at > sentAt + resendMs);
    if (removed) return gone(instance);
    const effects: Effect<ConvergeTask>[] = instance.observed === 'deleting' ? [] : [observe(instance, 'deleting')];
    if (sentAt === undefined || now - sentAt >= resendMs) effects.push(step(instance, 'remove'));
    return effects;
  }
  // Back from a remediation: converged again on its host before anything it reported is taken.
  if (exchange.reapply === true) return [step(instance, 'apply')];
  const report = heard?.report;
  if (report?.desiredState === desired && report.state === desired) {
    const next = { observed: desired, addresses: report.addresses, message: report.message ?? null };
    const known = { observed: instance.observed, addresses: instance.addresses, message: instance.message };
    if (isDeepStrictEqual(next, known)) return [];
    return [observe(instance, desired, { addresses: report.addresses, ...(report.message ? { message: report.message } : {}) })];
  }
  if (report?.desiredState === desired && report.state === 'error')
    return [observe(instance, 'error', { addresses: [], message: (report.message ?? `${report.runtime} reports the instance in error`).slice(0, 2_000) })];
  // Moved off a lost node: it runs nowhere we know of until its new node lists it (and no longer waits for capacity).
  const moving = exchange.relocated === true && exchange.seen !== true && (instance.observed !== 'provisioning' || instance.message !== null);
  const provisioning = moving ? [observe(instance, 'provisioning', { addresses: [] })] : [];
  const applied = exchange.applied;
  if (applied?.desired === desired && now - applied.at < resendMs) return provisioning;
  return [...provisioning, step(instance, 'apply')];
}
