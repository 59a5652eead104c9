import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { secretEvents, type SecretEvent } from '../../../schemas/secrets/events.ts';
import type { SealedValue, SecretKind } from '../../../schemas/secrets/sealed.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** `version` counts on across deletes, so a sealed value is never valid for two lifetimes of one id. */
export type SecretState =
  | { readonly exists: false; readonly version: number }
  | {
      readonly exists: true;
      readonly secretId: string;
      readonly kind: SecretKind;
      readonly version: number;
      readonly sealed: SealedValue;
      readonly keyId: string;
      readonly description: string | null;
    };

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
