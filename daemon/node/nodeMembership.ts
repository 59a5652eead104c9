import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What an installed host remembers of its join (`<stateDir>/membership.json`, next to `identity.key`): the token is
 * spent, so a restart resumes on the durable the control plane made for this key instead of joining again.
 */
export interface NodeMembership {
  siteId: string;
  nodeId: string;
  agentId: string;
  durable: string;
  /** Joined under broker permissions: the NATS credentials the join issued, which a restart connects with. */
  credentials?: { creds: string; inboxPrefix: string };
}

const fileOf = (stateDir: string) => join(stateDir, 'membership.json');

export function loadNodeMembership(stateDir: string): NodeMembership | undefined {
  const file = fileOf(stateDir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as NodeMembership;
}

/** Written to a temp file and renamed, so a crash during the write leaves the previous membership or none. */
export function saveNodeMembership(stateDir: string, membership: NodeMembership): void {
  const file = fileOf(stateDir);
  writeFileSync(`${file}.tmp`, JSON.stringify(membership), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
