import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { secretEvents, type SecretEvent } from '../../../schemas/secrets/events.ts';
import type { SecretState } from '../../../schemas/secrets/secretState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export type { SecretState } from '../../../schemas/secrets/secretState.ts';

/** A sealed secret (`bc.evt.secrets.secret.<secretId>`): its current version, held only as ciphertext. */
export const secretAggregate = defineAggregate<SecretState, SecretEvent>({
  module: 'secrets',
  type: 'secret',
  initialState: { exists: false, version: 0 },
  catalog: new EventCatalog(secretEvents),
  evolve(_state, event) {
    switch (event.type) {
      case 'SecretStored':
        return { exists: true, ...event.data };
      case 'SecretDeleted':
        return { exists: false, version: event.data.version };
    }
  },
});
