import { ProviderError } from '../../../plugins/sdk/provider.ts';
import type { ObservedInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import type { VpsEvent } from '../../../schemas/vps/events.ts';
import type { Fold, Input, Reaction } from '../../platform/processManager/processManager.ts';
import type { ReconcilerConfig } from './config.ts';
import type { ConvergeTask, Observation } from './effects.ts';
import { instanceKey, isAtRest, type VpsModel } from './model.ts';

export type Backoff = Pick<ReconcilerConfig, 'backoffMs' | 'maxBackoffMs'>;

/** The wait after the `failures`-th transient failure in a row. */
export const backoffDelay = (backoff: Backoff, failures: number) => Math.min(backoff.backoffMs * 2 ** (failures - 1), backoff.maxBackoffMs);

/**
 * Folds the VPS events, and what came of the reconciler's own commands and passes: a report or quota release that
 * succeeded is applied at once, so the next pass does not wait for the event to come round through the consumer; a
 * report refused because another tenant owns the instance marks the request refused; a pass the provider could not
 * serve backs off, one that went through clears its backoff.
 */
export function evolveVps(model: VpsModel, input: Fold<VpsEvent, ConvergeTask>, backoff: Backoff): void {
  switch (input.type) {
    case 'event':
      model.apply(input.event, input.seq);
      return;
    case 'decided':
      return;
    case 'performed': {
      const key = input.task.converge;
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

/**
 * What the reconciler does, as data: a tenant's intent (a request, a new desired state) calls for a pass over that
 * instance; observations and quota releases are its own reports, already in the model. On start and every resync, every
 * instance not at rest and not asked about within the last `resyncMs`, or whose backoff is over, gets a pass unless one
 * is already queued. Passes are keyed by instance, so one instance's run one after another.
 */
export function decideVps(input: Input<VpsEvent>, model: VpsModel, { resyncMs }: Pick<ReconcilerConfig, 'resyncMs'>): Reaction<ConvergeTask>[] {
  if (input.type === 'event') {
    const { event } = input;
    // The end of a remediation calls for a pass too: the provider is checked, and the instance taken back to where it was.
    if (!['InstanceRequested', 'InstanceDesiredStateSet', 'InstanceRemediationCompleted'].includes(event.type)) return [];
    const { tenantId, instanceId } = event.data as { tenantId: string; instanceId: string };
    const pass = passOf(model, instanceKey(tenantId, instanceId));
    return pass ? [pass] : [];
  }
  const reactions: Reaction<ConvergeTask>[] = [];
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

function passOf(model: VpsModel, key: string, polledAt?: number): Reaction<ConvergeTask> | undefined {
  const instance = model.instances.get(key);
  if (!instance || !model.accountOf(instance)) return undefined;
  // What the pass does is planned when it runs (`planPass`), on the model as the passes before it left it.
  return { key, effects: [{ kind: 'task', task: { converge: key, step: 'plan', ...(polledAt === undefined ? {} : { polledAt }) } }] };
}
