import { aggregateRef } from '../aggregateRef.ts';

/** No token here, ever: only the id of the sealed secret that holds it. */
export type AccountState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly accountId: string;
      readonly providerId: string;
      readonly region: string;
      readonly config: Readonly<Record<string, string | number | boolean>>;
      readonly tokenSecretId: string;
    };

/** What another aggregate may read of a provider account (`bc.evt.vps.account.<accountId>`). */
export const accountRef = aggregateRef<AccountState>('vps', 'account');
