import { aggregateRef } from '../aggregateRef.ts';
import type { SealedValue, SecretKind } from './sealed.ts';

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

/** What another module may read of a secret (`bc.evt.secrets.secret.<secretId>`): its ciphertext, never a value. */
export const secretRef = aggregateRef<SecretState>('secrets', 'secret');
