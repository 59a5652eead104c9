import { isDeepStrictEqual } from 'node:util';
import type { ObservedInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import { ProviderError, clientTokenOf, type ProviderClient, type ProviderInstance } from '../../../plugins/sdk/provider.ts';
import { idFor } from '../../../schemas/ids.ts';
import type { Effect } from '../../platform/processManager/processManager.ts';
import { observe, releaseQuota, type ConvergeTask } from './effects.ts';
import { isAtRest, type ReconciledInstance } from './model.ts';

/** What a pass may ask of the world besides commands. */
export interface ProviderAccess {
  readonly signal: AbortSignal;
  /** The account's client; throws a `configuration` ProviderError when it cannot be built. */
  client(instance: ReconciledInstance): Promise<ProviderClient>;
  offerOf(instance: ReconciledInstance): string | undefined;
}

type Effects = readonly Effect<ConvergeTask>[];

/** Whether a `not-found` means the instance is simply gone. */
const isGone = (error: unknown) => error instanceof ProviderError && error.kind === 'not-found';

async function lookUp(client: ProviderClient, instance: ReconciledInstance): Promise<ProviderInstance | null> {
  if (instance.providerInstanceId === null) return client.findByClientToken(clientTokenOf(instance.instanceId));
  try {
    const found = await client.getInstance(instance.providerInstanceId);
    return found.state === 'deleted' ? null : found;
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

/**
 * One pass over one instance, as far as it needs no provider: moves it one step toward what its tenant wants.
 * `provisioning` is recorded before anything is created (the first event on the instance's subject fixes its owner;
 * refused because another tenant owns it, the request gets only its quota back), then the provider part (`probe`)
 * follows as a task.
 */
export function planPass(instance: ReconciledInstance, { polledAt }: Pick<ConvergeTask, 'polledAt'> = {}): Effects {
  const task: Effect<ConvergeTask> = { kind: 'task', task: { converge: instance.key, step: 'probe' } };
  // A remediation holds the instance (its steps may act on it); a failed one left it for someone to look at.
  if (instance.released || instance.refused || instance.held === true) return [];
  // A poll queued behind the pass that brought the instance to rest, or that asked the provider after it was queued.
  if (polledAt !== undefined && (isAtRest(instance) || (instance.probedAt ?? -Infinity) >= polledAt)) return [];
  // Recorded gone but the reservation not yet given back (a crash in between): only the release is left.
  if (instance.observed === 'deleted') return [releaseQuota(instance)];
  // An error waits for the tenant to delete the instance: retrying would repeat what the provider refused.
  if (instance.observed === 'error' && instance.desired !== 'deleted') return [];
  if (instance.observed !== null) return [task];
  // Nothing is created before `provisioning` is recorded, so nothing exists to delete. Both reports happen once per
  // instance (from no observation at all), so their ids are derived.
  if (instance.desired === 'deleted') return [observe(instance, 'deleted', {}, idFor('observe-deleted', instance.key)), releaseQuota(instance)];
  const provisioning = observe(instance, 'provisioning', {}, idFor('observe-provisioning', instance.key));
  return [{ ...provisioning, ifRefused: (refusal) => (refusal.code === 'ALREADY_EXISTS' ? [releaseQuota(instance)] : undefined) }, task];
}

/**
 * The provider part of a pass: a create is preceded by a lookup of the client token, so a retried pass, or one after
 * a crash that lost the create's answer, finds the instance instead of making a second one. The one exception is the
 * first probe after this process appended `provisioning` itself (`nothingCreatedYet`): nothing is created before that
 * record, so nothing can exist yet, and a replica racing it after the record sends the same client token, on which
 * every provider's create is idempotent (the SDK's conformance suite holds them to it). Answers what to record.
 * Transient provider errors are thrown for the caller to retry later; anything else the provider refuses ends in
 * `error` with its message.
 */
export async function probe(instance: ReconciledInstance, access: ProviderAccess): Promise<Effects> {
  let existed = instance.providerInstanceId !== null;
  try {
    const client = await access.client(instance);
    let current = instance.nothingCreatedYet === true ? null : await lookUp(client, instance);
    existed ||= current !== null;
    if (instance.desired === 'deleted') {
      if (current !== null) {
        if (current.state !== 'deleting') await client.deleteInstance(current.providerInstanceId);
        return report(instance, 'deleting', current);
      }
      return [observe(instance, 'deleted'), releaseQuota(instance)];
    }
    if (current === null) {
      if (instance.providerInstanceId !== null)
        return [observe(instance, 'error', { message: `the provider no longer knows instance ${instance.providerInstanceId}` })];
      current = await client.createInstance(specOf(instance, access));
      existed = true;
    }
    await powerToward(client, instance, current);
    return report(instance, current.state, current);
  } catch (error) {
    access.signal.throwIfAborted();
    if (error instanceof ProviderError && error.kind === 'transient') throw error;
    // configuration, rejected, not-found of an action, or a provider bug: the operator's (or plugin author's) to fix.
    const message = error instanceof Error ? `${error instanceof ProviderError ? `${error.code}: ` : ''}${error.message}` : 'provider failed';
    return [observe(instance, 'error', { message: message.slice(0, 2_000) }), ...(existed ? [] : [releaseQuota(instance)])];
  }
}

function specOf(instance: ReconciledInstance, access: ProviderAccess) {
  const offerId = access.offerOf(instance);
  if (offerId === undefined)
    throw new ProviderError('rejected', `flavor ${instance.spec.flavorId} is not mapped onto an offer in pool ${instance.spec.poolId}`);
  const { image, sshKeys, userData } = instance.spec;
  // User data goes out exactly as the tenant gave it: the pool runs no agent, so no join token is ever added.
  return {
    clientToken: clientTokenOf(instance.instanceId),
    name: instance.instanceId,
    offerId,
    image,
    sshKeys: [...sshKeys],
    ...(userData === null ? {} : { userData }),
  };
}

/** Asks for the power state the tenant wants; the next pass sees the result. */
async function powerToward(client: ProviderClient, instance: ReconciledInstance, current: ProviderInstance): Promise<void> {
  if (instance.desired === 'stopped' && current.state === 'running') await client.stopInstance(current.providerInstanceId);
  if (instance.desired === 'running' && current.state === 'stopped') await client.startInstance(current.providerInstanceId);
}

/**
 * Records what the provider shows, unless the model already says exactly that (a resync then appends nothing). A
 * server still in the state recorded before it was created (`provisioning`) is not worth a record of its own for its
 * id: the next pass finds it again by its client token, and the id is recorded with its next state.
 */
function report(instance: ReconciledInstance, observed: ObservedInstanceState, current: ProviderInstance): Effects {
  if (instance.providerInstanceId === null && observed === instance.observed) return [];
  const next = { observed, providerInstanceId: current.providerInstanceId, addresses: current.addresses, message: current.message ?? null };
  const known = { observed: instance.observed, providerInstanceId: instance.providerInstanceId, addresses: instance.addresses, message: instance.message };
  if (isDeepStrictEqual(next, known)) return [];
  return [
    observe(instance, observed, {
      providerInstanceId: current.providerInstanceId,
      addresses: current.addresses,
      ...(current.message ? { message: current.message } : {}),
    }),
  ];
}
