import { PutSecret } from '../../../schemas/secrets/commands.ts';
import type { SecretEvent } from '../../../schemas/secrets/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { secretAggregate } from './secret.ts';

/**
 * `secrets.put`. The value was sealed for `version` (it is in the authenticated data), so only the next version is
 * accepted: a sender that raced another put seals again rather than storing a blob that would never open.
 */
export const putSecret = defineCommand({
  name: 'secrets.put',
  exposure: ['edge'],
  schema: PutSecret,
  aggregate: secretAggregate,
  aggregateId: (command) => command.secretId,
  decide(command, state): SecretEvent[] {
    if (command.version !== state.version + 1) {
      throw new DomainError(
        'CONCURRENCY_CONFLICT',
        `secret ${command.secretId} is at version ${state.version}; a put must be sealed for version ${state.version + 1}`,
      );
    }
    if (state.exists && state.kind !== command.kind) {
      throw new DomainError(
        'ILLEGAL_TRANSITION',
        `secret ${command.secretId} is a ${state.kind} secret; delete it to reuse the id for a ${command.kind} secret`,
      );
    }
    const description = command.description ?? (state.exists ? state.description : null);
    const { secretId, kind, version, sealed } = command;
    return [{ type: 'SecretStored', data: { secretId, kind, version, sealed, keyId: sealed.keyId, description } }];
  },
});
