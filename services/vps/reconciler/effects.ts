import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ObservedInstanceState } from '../../../schemas/vps/commands.ts';
import type { LeaseTerm } from '../../platform/lease/leaderLease.ts';
import type { Logger } from '../../platform/logger.ts';
import { sendEngineCommand } from '../../workflow/commandSender.ts';
import type { ConvergeEffects, Observation } from './converge.ts';
import type { ReconciledInstance, VpsModel } from './model.ts';
import type { ProviderClients } from './providerClients.ts';
import { idFor } from '../../../schemas/ids.ts';

/**
 * The reconciler's effects as engine commands over NATS. Each command that succeeded is also applied to the model at
 * once, so the next pass does not wait for the event to come round through the consumer.
 */
export function engineEffects(
  nc: NatsConnection,
  log: Logger,
  signal: AbortSignal,
  model: VpsModel,
  clients: ProviderClients,
  lease?: LeaseTerm,
): ConvergeEffects {
  const stamp = lease ? { lease } : {};
  return {
    signal,
    async client(instance) {
      const found = model.accountOf(instance);
      if (!found) throw new Error(`pool ${instance.spec.poolId} has no provider account`);
      return clients.clientFor(found.accountId, found.account);
    },
    offerOf: (instance) => model.offerOf(instance),
    async record(instance: ReconciledInstance, observed: ObservedInstanceState, observation: Observation = {}) {
      const { tenantId, instanceId } = instance;
      const payload = { instanceId, tenantId, observed, ...observation, ...(observation.addresses ? { addresses: [...observation.addresses] } : {}) };
      let refusal: string | undefined;
      // A fresh id per report: the same state may be reported again later (running → stopped → running), and the
      // decider makes a repeated report that changes nothing a no-op anyway.
      await sendEngineCommand(nc, log, signal, 'vps.recordInstanceObserved', payload, `observe-${randomUUID()}`, {
        ...stamp,
        onRefused: (err) => (refusal = err.code),
      });
      if (refusal === 'ALREADY_EXISTS') return 'refused';
      // Any other refusal (logged by the sender) leaves the model as the log has it.
      if (refusal !== undefined) return 'recorded';
      instance.observed = observed;
      instance.providerInstanceId = observation.providerInstanceId ?? instance.providerInstanceId;
      instance.addresses = observation.addresses ?? instance.addresses;
      instance.message = observation.message ?? null;
      return 'recorded';
    },
    async markQuotaUsed(instance) {
      const { tenantId, instanceId } = instance;
      await sendEngineCommand(nc, log, signal, 'vps.markQuotaUsed', { tenantId, instanceId }, idFor('quota-used', instance.key), stamp);
      instance.quotaUsed = true;
    },
    async releaseQuota(instance) {
      const { tenantId, instanceId } = instance;
      await sendEngineCommand(nc, log, signal, 'vps.releaseQuota', { tenantId, instanceId }, idFor('quota-release', instance.key), stamp);
      instance.released = true;
    },
  };
}
