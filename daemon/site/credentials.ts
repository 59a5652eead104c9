import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { AgentError } from '../agent/errors.ts';

export interface BmcCredentials {
  username: string;
  password: string;
}

/**
 * Turns a `secret:<id>` reference into BMC credentials. In production: the control plane's grants of sealed secrets
 * (`grantedCredentials.ts`); a file on the site is a lab option only. `nodeId` names the node whose BMC the
 * credentials are for: a grant is authorised per node.
 */
export interface CredentialResolver {
  resolve(ref: string, context?: { nodeId: string }): Promise<BmcCredentials>;
}

const CredentialsFile = z.record(z.string(), z.object({ username: z.string(), password: z.string() }));

/**
 * LAB ONLY: plaintext credentials in a file on the site (`{ "secret:<id>": { "username", "password" } }`), for
 * simulators and bench setups without a control plane's sealed secrets. A compromised site then holds every BMC
 * password at rest, which is what the grant path exists to avoid. Checked on every resolve so an edit applies without
 * a restart, but parsed again only when its size or modification time changed: a site of 10,000 BMCs has a file of
 * 10,000 entries, and parsing it for every Redfish command made each command cost in proportion to the fleet.
 * Errors name the reference, never the secret.
 */
export function fileCredentialResolver(path: string): CredentialResolver & { path: string } {
  let cached: { version: string; entries: z.infer<typeof CredentialsFile> } | undefined;
  const load = async (): Promise<z.infer<typeof CredentialsFile>> => {
    try {
      const { size, mtimeMs, ino } = await stat(path);
      const version = `${ino}:${size}:${mtimeMs}`;
      if (cached?.version !== version) cached = { version, entries: CredentialsFile.parse(JSON.parse(await readFile(path, 'utf8'))) };
      return cached.entries;
    } catch (cause) {
      cached = undefined;
      throw new AgentError('CREDENTIALS_MISSING', `credentials file ${path} is missing or invalid`, { cause });
    }
  };
  return {
    path,
    async resolve(ref) {
      const found = (await load())[ref];
      if (!found) throw new AgentError('CREDENTIALS_MISSING', `no credentials for ${ref}`);
      return found;
    },
  };
}
