import { sealingAad } from '../../schemas/secrets/sealed.ts';
import { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { EventStore } from '../platform/eventStore/eventStore.ts';
import type { MasterKey } from '../secrets/masterKey.ts';
import { open } from '../secrets/sealing.ts';
import { secretAggregate } from '../secrets/secret/secret.ts';
import type { ProviderTokens } from '../processes/vpsReconciler/providerClients.ts';

/**
 * The VPS reconciler's provider tokens: sealed secrets read from the log and opened with this process's master key.
 * Wired here, where both modules meet, so the reconciler depends on neither the key nor the secrets module.
 */
export function sealedProviderTokens(store: EventStore, masterKey: MasterKey): ProviderTokens {
  const repository = new AggregateRepository(store, 10_000);
  return {
    // Asked before every provider call: the log is read at most once per `LATEST_SEEN_MAX_AGE_MS` per token, so a
    // rotated token is picked up that much later at most, instead of one read of the log per call.
    async versionOf(secretId) {
      const secret = (await repository.latestSeen(secretAggregate, secretId)).state;
      return secret.exists ? secret.version : undefined;
    },
    async open(secretId, version) {
      const secret = (await repository.load(secretAggregate, secretId)).state;
      // Rotated between the two reads: the version asked for is no longer what the log holds.
      if (!secret.exists || secret.version !== version) throw new Error(`secret ${secretId} is no longer at version ${version}`);
      return open(secret.sealed, masterKey, sealingAad(secretId, version)).toString('utf8');
    },
  };
}
