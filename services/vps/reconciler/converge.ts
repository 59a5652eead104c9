import { isDeepStrictEqual } from 'node:util';
import type { ObservedInstanceState } from '../../../schemas/vps/commands.ts';
import { ProviderError, clientTokenOf, type ProviderClient, type ProviderInstance } from '../../../plugins/sdk/provider.ts';
import type { ReconciledInstance } from './model.ts';

/** What the reconciler may record about an instance besides its state. */
export interface Observation {
  readonly providerInstanceId?: string;
  readonly addresses?: readonly string[];
  readonly message?: string;
}

/** The effects one pass may have; each is safe to repeat (engine commands with deterministic ids or no-op deciders). */
export interface ConvergeEffects {
  readonly signal: AbortSignal;
  /** The account's client; throws a `configuration` ProviderError when it cannot be built. */
  client(instance: ReconciledInstance): Promise<ProviderClient>;
  offerOf(instance: ReconciledInstance): string | undefined;
  /** `refused`: the instance's subject belongs to another tenant. */
  record(instance: ReconciledInstance, observed: ObservedInstanceState, observation?: Observation): Promise<'recorded' | 'refused'>;
  markQuotaUsed(instance: ReconciledInstance): Promise<void>;
  releaseQuota(instance: ReconciledInstance): Promise<void>;
}

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
 * One pass over one instance: moves it one step toward what its tenant wants and records what the provider shows.
 * `provisioning` is recorded before anything is created (the first event on the instance's subject fixes its owner),
 * and a create is always preceded by a lookup of the client token, so a retried pass, or one after a crash that
 * lost the create's answer, finds the instance instead of making a second one. Transient provider errors are
 * thrown for the caller to retry later; anything else the provider refuses ends in `error` with its message.
 */
export async function converge(instance: ReconciledInstance, effects: ConvergeEffects): Promise<void> {
  if (instance.released || instance.refused) return;
  // Recorded gone but the reservation not yet given back (a crash in between): only the release is left.
  if (instance.observed === 'deleted') return effects.releaseQuota(instance);
  // An error waits for the tenant to delete the instance: retrying would repeat what the provider refused.
  if (instance.observed === 'error' && instance.desired !== 'deleted') return;
  if (instance.observed === null) {
    // Nothing is created before `provisioning` is recorded, so nothing exists to delete.
    if (instance.desired === 'deleted') {
      await effects.record(instance, 'deleted');
      return effects.releaseQuota(instance);
    }
    if ((await effects.record(instance, 'provisioning')) === 'refused') {
      instance.refused = true;
      return effects.releaseQuota(instance);
    }
  }
  let existed = instance.providerInstanceId !== null;
  try {
    const client = await effects.client(instance);
    let current = await lookUp(client, instance);
    existed ||= current !== null;
    if (instance.desired === 'deleted') {
      if (current !== null) {
        if (current.state !== 'deleting') await client.deleteInstance(current.providerInstanceId);
        return void (await report(instance, effects, 'deleting', current));
      }
      await effects.record(instance, 'deleted');
      return effects.releaseQuota(instance);
    }
    if (current === null) {
      if (instance.providerInstanceId !== null) {
        return void (await effects.record(instance, 'error', { message: `the provider no longer knows instance ${instance.providerInstanceId}` }));
      }
      current = await client.createInstance(specOf(instance, effects));
      existed = true;
    }
    await powerToward(client, instance, current);
    await report(instance, effects, current.state, current);
    if (current.state === 'running' && !instance.quotaUsed) await effects.markQuotaUsed(instance);
  } catch (error) {
    effects.signal.throwIfAborted();
    if (error instanceof ProviderError && error.kind === 'transient') throw error;
    // configuration, rejected, not-found of an action, or a provider bug: the operator's (or plugin author's) to fix.
    const message = error instanceof Error ? `${error instanceof ProviderError ? `${error.code}: ` : ''}${error.message}` : 'provider failed';
    await effects.record(instance, 'error', { message: message.slice(0, 2_000) });
    if (!existed) await effects.releaseQuota(instance);
  }
}

function specOf(instance: ReconciledInstance, effects: ConvergeEffects) {
  const offerId = effects.offerOf(instance);
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

/** Records what the provider shows, unless the model already says exactly that (a resync then appends nothing). */
async function report(instance: ReconciledInstance, effects: ConvergeEffects, observed: ObservedInstanceState, current: ProviderInstance): Promise<void> {
  const next = { observed, providerInstanceId: current.providerInstanceId, addresses: current.addresses, message: current.message ?? null };
  const known = { observed: instance.observed, providerInstanceId: instance.providerInstanceId, addresses: instance.addresses, message: instance.message };
  if (isDeepStrictEqual(next, known)) return;
  await effects.record(instance, observed, {
    providerInstanceId: current.providerInstanceId,
    addresses: current.addresses,
    ...(current.message ? { message: current.message } : {}),
  });
}
