import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentError } from '../agent/errors.ts';

export interface BmcCredentials {
  username: string;
  password: string;
}

/**
 * Turns a `secret:<id>` reference into BMC credentials. Pluggable: the control plane's grants
 * (`grantedCredentials.ts`), an operator's file on the site, or a vault client. `nodeId` names the node whose BMC
 * the credentials are for: a grant is authorised per node.
 */
export interface CredentialResolver {
  resolve(ref: string, context?: { nodeId: string }): Promise<BmcCredentials>;
}

const CredentialsFile = z.record(z.string(), z.object({ username: z.string(), password: z.string() }));

/**
 * `<stateDir>/credentials.json`: `{ "secret:<id>": { "username", "password" } }`. Read on every resolve so an
 * operator's edit applies without a restart. Errors name the reference, never the secret.
 */
export function fileCredentialResolver(stateDir: string): CredentialResolver & { path: string } {
  const path = join(stateDir, 'credentials.json');
  return {
    path,
    async resolve(ref) {
      let entries: z.infer<typeof CredentialsFile>;
      try {
        entries = CredentialsFile.parse(JSON.parse(await readFile(path, 'utf8')));
      } catch (cause) {
        throw new AgentError('CREDENTIALS_MISSING', `credentials file ${path} is missing or invalid`, { cause });
      }
      const found = entries[ref];
      if (!found) throw new AgentError('CREDENTIALS_MISSING', `no credentials for ${ref}`);
      return found;
    },
  };
}
