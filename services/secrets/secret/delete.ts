import { DeleteSecret } from '../../../schemas/secrets/commands.ts';
import type { SecretEvent } from '../../../schemas/secrets/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { secretAggregate } from './secret.ts';

/** `secrets.delete`: grants for the secret stop at once; deleting a deleted secret is a no-op. */
export const deleteSecret = defineCommand({
  name: 'secrets.delete',
  exposure: ['edge'],
  schema: DeleteSecret,
  aggregate: secretAggregate,
  aggregateId: (command) => command.secretId,
  decide(command, state): SecretEvent[] {
    if (state.exists) return [{ type: 'SecretDeleted', data: { secretId: command.secretId, version: state.version } }];
    if (state.version > 0) return [];
    throw new DomainError('NOT_FOUND', `secret ${command.secretId} does not exist`);
  },
});
