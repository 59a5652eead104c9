import { ProviderError } from '../../../plugins/sdk/provider.ts';
import type { ObservedInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import type { VpsEvent } from '../../../schemas/vps/events.ts';
import type { Fold, Input, Reaction } from '../../platform/processManager/processManager.ts';
import type { ReconcilerConfig } from './config.ts';
import type { ConvergeTask, Observation } from './effects.ts';
import type { HostInstancesHeard } from './hostReports.ts';
import { instanceKey, isAtRest, type VpsModel } from './model.ts';
import { poolsHeardOf, removalReactions, warmPass } from './warmKeeper.ts';

export type Backoff = Pick<ReconcilerConfig, 'backoffMs' | 'maxBackoffMs'>;

/** The wait after the `failures`-th transient failure in a row. */
export const backoffDelay = (backoff: Backoff, failures: number) => Math.min(backoff.backoffMs * 2 ** (failures - 1), backoff.maxBackoffMs);

/**
 * Folds the VPS events, and what came of the reconciler's own commands and passes: a report or quota release that
 * succeeded is applied at once, so the next pass does not wait for the event to come round through the consumer; a
 * report refused because another tenant owns the instance marks the request refused; a pass the provider could not
 * serve backs off, one that went through clears its backoff.
 */
export function evolveVps(model: VpsModel, input: Fold<VpsEvent, ConvergeTask, HostInstancesHeard>, backoff: Backoff): void {
  switch (input.type) {
    case 'event':
      model.apply(input.event, input.seq);
      return;
    case 'decided':
      return;
    case 'observed': {
      const heard = input.observation;
      model.hosts.heard(heard);
      // Orphans found here are removed by the reaction `decideVps` takes on the same heartbeat.
      model.warm.heard(heard);
      // Listed by the node it is placed on: from now on, its absence from that node's heartbeat means it was removed.
      for (const key of model.placedOn.get(heard.nodeId) ?? []) {
        const instance = model.instances.get(key);
        if (instance && heard.instances.some((r) => r.id === instance.instanceId)) instance.host = { ...instance.host, seen: true };
      }
      // A node an instance was moved off that no longer lists it has no copy left.
      const copies = model.copiesLeft.get(heard.nodeId);
      for (const key of copies?.keys() ?? []) {
        const instanceId = model.instances.get(key)?.instanceId;
        if (!heard.instances.some((r) => r.id === instanceId)) copies!.delete(key);
      }
      return;
    }
    case 'performed': {
      const key = input.task.converge;
      if (input.task.step === 'prepareSlot' || input.task.step === 'removeSlot') return warmCommandSent(model, input.task, input.now, input.error);
      if (input.task.step === 'apply' || input.task.step === 'remove') return hostCommandSent(model, key, input.task.step, input.now, input.error);
      if (input.task.step === 'removeCopy') {
        const copy = model.copiesLeft.get(input.task.nodeId ?? '')?.get(key);
        if (copy && input.error === undefined) copy.removeSentAt = input.now;
        return;
      }
      if (input.task.step === 'place') {
        const placing = model.instances.get(key);
        if (placing) placing.host = { ...placing.host, placeAskedAt: placing.host?.placeAskedAt ?? input.now };
        return;
      }
      if (input.task.step !== 'probe') return;
      // Whatever came of it, the probe may have created the server.
      const probed = model.instances.get(key);
      if (probed) Object.assign(probed, { nothingCreatedYet: false, probedAt: input.now });
      if (!(input.error instanceof ProviderError && input.error.kind === 'transient')) return void model.retries.delete(key);
      const failures = (model.retries.get(key)?.failures ?? 0) + 1;
      model.retries.set(key, { failures, at: input.now + backoffDelay(backoff, failures) });
      return;
    }
    case 'sent': {
      const { name, payload } = input.command;
      const { tenantId, instanceId } = payload as { tenantId: string; instanceId: string };
      const instance = model.instances.get(instanceKey(tenantId, instanceId));
      if (!instance) return;
      if (name === 'vps.releaseQuota') instance.released = true;
      if (name !== 'vps.recordInstanceObserved') return;
      // Owned by another tenant: this request gets nothing but its quota back. Any other refusal (logged by the
      // sender) leaves the model as the log has it.
      if (input.refusal?.code === 'ALREADY_EXISTS') instance.refused = true;
      if (input.refusal) return;
      const observed = payload as Observation & { observed: ObservedInstanceState };
      if (observed.observed === 'provisioning' && input.appended === true) instance.nothingCreatedYet = true;
      instance.observed = observed.observed;
      instance.providerInstanceId = observed.providerInstanceId ?? instance.providerInstanceId;
      instance.addresses = observed.addresses ?? instance.addresses;
      instance.message = observed.message ?? null;
      if (input.seq !== undefined) instance.observedSeq = Math.max(instance.observedSeq ?? 0, input.seq);
      return;
    }
  }
}

/** A slot's `instance.apply` or `instance.remove` went out (no error): it is not sent again before `resendMs`. */
function warmCommandSent(model: VpsModel, task: ConvergeTask, now: number, error: unknown): void {
  if (error !== undefined || task.slotId === undefined) return;
  const slot = model.warm.slots.get(task.slotId);
  if (task.step === 'prepareSlot' && slot) slot.preparedSentAt = now;
  const removal = model.warm.removals.get(`${task.nodeId}/${task.slotId}`);
  if (task.step === 'removeSlot' && removal) removal.removeSentAt = now;
}

/** An `instance.apply` or `instance.remove` went out (no error): it is not sent again before `resendMs`. */
function hostCommandSent(model: VpsModel, key: string, step: 'apply' | 'remove', now: number, error: unknown): void {
  const instance = model.instances.get(key);
  if (!instance || error !== undefined) return;
  if (step === 'remove') instance.host = { ...instance.host, removeSentAt: now };
  else if (instance.desired !== 'deleted') instance.host = { ...instance.host, applied: { desired: instance.desired, at: now }, reapply: false };
}

/**
 * A host's verified heartbeat calls for a pass over each instance placed on it that it says something new about, and
 * for the removal of each copy it lists of an instance moved off it (again `resendMs` after the last ask).
 */
function passesOnHeard(model: VpsModel, heard: HostInstancesHeard, resendMs: number): Reaction<ConvergeTask>[] {
  const onNode = [...model.warm.removals.values()].filter((r) => r.nodeId === heard.nodeId && heard.instances.some((i) => i.id === r.slotId));
  const reactions: Reaction<ConvergeTask>[] = [
    ...[...poolsHeardOf(model, heard.nodeId, model.hosts)].map(warmPass),
    ...removalReactions(model.warm, heard.at, resendMs, onNode),
  ];
  for (const [key, copy] of model.copiesLeft.get(heard.nodeId) ?? []) {
    if (copy.removeSentAt !== undefined && heard.at - copy.removeSentAt < resendMs) continue;
    const task: ConvergeTask = { converge: key, step: 'removeCopy', nodeId: heard.nodeId };
    // Its own key: a removal on the node left behind need not wait for the instance's passes, nor they for it.
    reactions.push({ key: `copy:${heard.nodeId}/${key}`, effects: [{ kind: 'task', task }], coalesce: true });
  }
  for (const key of model.placedOn.get(heard.nodeId) ?? []) {
    const instance = model.instances.get(key);
    if (!instance || instance.released || instance.refused || instance.held === true) continue;
    const report = heard.instances.find((r) => r.id === instance.instanceId);
    const news = !isAtRest(instance) || report?.state !== instance.observed || JSON.stringify(report.addresses) !== JSON.stringify(instance.addresses);
    const pass = news ? passOf(model, key) : undefined;
    if (pass) reactions.push({ ...pass, coalesce: true });
  }
  return reactions;
}

/**
 * What the reconciler does, as data: a tenant's intent (a request, a new desired state) calls for a pass over that
 * instance; observations and quota releases are its own reports, already in the model. On start and every resync, every
 * instance not at rest and not asked about within the last `resyncMs`, or whose backoff is over, gets a pass unless one
 * is already queued. Passes are keyed by instance, so one instance's run one after another.
 */
export function decideVps(
  input: Input<VpsEvent, HostInstancesHeard>,
  model: VpsModel,
  { resyncMs, hostResendMs }: Pick<ReconcilerConfig, 'resyncMs' | 'hostResendMs'>,
): Reaction<ConvergeTask>[] {
  if (input.type === 'observed') return passesOnHeard(model, input.observation, hostResendMs);
  if (input.type === 'event') {
    const { event } = input;
    const warm = warmReactions(event, model, hostResendMs);
    if (warm) return warm;
    // The end of a remediation calls for a pass too: the provider is checked, and the instance taken back to where it was.
    // A metal instance placed on its node goes on to its host.
    // A lost node's instance is placed again, then goes on to its new host.
    const passing = [
      'InstanceRequested',
      'InstanceDesiredStateSet',
      'InstanceRemediationCompleted',
      'InstancePlaced',
      'InstanceRelocationRequested',
      'InstanceRelocated',
    ];
    if (!passing.includes(event.type)) return [];
    const { tenantId, instanceId } = event.data as { tenantId: string; instanceId: string };
    const pass = passOf(model, instanceKey(tenantId, instanceId));
    return pass ? [pass] : [];
  }
  const reactions: Reaction<ConvergeTask>[] = [...[...model.warm.pools()].map(warmPass), ...removalReactions(model.warm, input.now, hostResendMs)];
  for (const [key, instance] of model.instances) {
    const retry = model.retries.get(key);
    if (instance.released || instance.refused) continue;
    // A server just created is not polled on the next tick already, which may come a moment later.
    const polledLately = instance.probedAt !== undefined && input.now - instance.probedAt < resyncMs;
    if (retry ? retry.at > input.now : isAtRest(instance) || polledLately) continue;
    const pass = passOf(model, key, retry === undefined ? input.now : undefined);
    if (pass) reactions.push({ ...pass, coalesce: true });
  }
  return reactions;
}

/**
 * The keeper's reactions to an event: a setting or a slot placed calls for a pass over its pool, a slot reaped for
 * its removal from its node, a create that took a slot for its refill (and the instance's own pass). Undefined: not
 * a warm pool's event.
 */
function warmReactions(event: VpsEvent, model: VpsModel, resendMs: number): Reaction<ConvergeTask>[] | undefined {
  switch (event.type) {
    case 'PoolWarmSet':
    case 'WarmSlotPlaced':
      return [warmPass(event.data.poolId)];
    case 'WarmSlotReaped':
      return removalReactions(
        model.warm,
        Number.POSITIVE_INFINITY,
        resendMs,
        [...model.warm.removals.values()].filter((r) => r.slotId === event.data.slotId),
      );
    case 'InstancePlaced': {
      if (!event.data.warmSlot) return undefined;
      const pass = passOf(model, instanceKey(event.data.tenantId, event.data.instanceId));
      return [...(pass ? [pass] : []), warmPass(event.data.poolId)];
    }
    default:
      return undefined;
  }
}

function passOf(model: VpsModel, key: string, polledAt?: number): Reaction<ConvergeTask> | undefined {
  const instance = model.instances.get(key);
  // A metal pool that names no runtime runs no instances: they stay accepted and reserved, and are never placed.
  if (!instance || !(model.accountOf(instance) ?? model.metalPoolOf(instance)?.runtime)) return undefined;
  // What the pass does is planned when it runs (`planPass`), on the model as the passes before it left it.
  return { key, effects: [{ kind: 'task', task: { converge: key, step: 'plan', ...(polledAt === undefined ? {} : { polledAt }) } }] };
}
