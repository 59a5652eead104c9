/**
 * How a domain gets the platform's SSH keys and the tenant's user data: cloud-init's NoCloud source, a small ISO 9660
 * volume labelled `cidata` holding `meta-data` (instance id, hostname, `public-keys`, which NoCloud reads from its
 * meta-data) and `user-data` (the tenant's, unchanged). It lives in the account's storage pool, one volume per domain,
 * named from the domain UUID so a retried create overwrites the same one.
 */
import { buildIso9660 } from 'better-compute/sdk';
import type { ProviderInstanceSpec } from 'better-compute/sdk';

export const seedVolumeOf = (uuid: string): string => `bc-seed-${uuid}.iso`;

/** True when the guest has something to receive, so the account needs a seed pool. */
export const needsSeed = (spec: ProviderInstanceSpec): boolean => spec.sshKeys.length > 0 || spec.userData !== undefined;

export function seedIso(uuid: string, hostname: string, spec: ProviderInstanceSpec): Uint8Array {
  const metaData = [`instance-id: ${uuid}`, `local-hostname: ${hostname}`, 'public-keys:', ...spec.sshKeys.map((key) => `  - ${JSON.stringify(key)}`), ''].join(
    '\n',
  );
  // NoCloud needs a user-data file even when the tenant gave none; an empty cloud-config changes nothing.
  return buildIso9660({
    volumeId: 'cidata',
    files: [
      { name: 'meta-data', content: metaData },
      { name: 'user-data', content: spec.userData ?? '#cloud-config\n' },
    ],
  });
}
