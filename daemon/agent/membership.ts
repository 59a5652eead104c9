import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentMembership } from '../../schemas/agent/agentMembership.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { writeFileDurably, type DurableFs } from './durableFile.ts';

export type { AgentMembership };

/** `<stateDir>/membership.json`: what a long-lived agent keeps of its join (see `AgentMembership`). */
export const membershipFile = (stateDir: string) => join(stateDir, 'membership.json');

/**
 * The membership of an earlier start, or undefined when the agent never joined. A file that does not parse is a
 * `PRECONDITION_FAILED` naming the file, never a bare JSON error: the agent cannot join again with a spent token, so
 * the operator has to see which file to replace (written durably, a power loss no longer leaves one like that).
 */
export function loadMembership(stateDir: string): AgentMembership | undefined {
  const file = membershipFile(stateDir);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new PlatformError('PRECONDITION_FAILED', `${file} is not a membership (${text.length} bytes of broken JSON): rejoin with a new token`, { cause });
  }
  const membership = AgentMembership.safeParse(parsed);
  if (!membership.success) throw new PlatformError('PRECONDITION_FAILED', `${file} does not hold a membership: rejoin with a new token`);
  return membership.data;
}

/** Written durably (mode 0600: broker credentials hold the agent's NATS seed): a power loss leaves the previous one or this one. */
export function saveMembership(stateDir: string, membership: AgentMembership, fs?: DurableFs): void {
  writeFileDurably(membershipFile(stateDir), JSON.stringify(AgentMembership.parse(membership)), { mode: 0o600 }, fs);
}
