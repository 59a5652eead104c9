import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentLastError } from '../../schemas/agent/agentHeartbeat.ts';
import { writeFileDurably } from './durableFile.ts';

/** `<stateDir>/last-error.json`: what stopped the agent's previous process, reported in its next one's heartbeats. */
const fileOf = (stateDir: string) => join(stateDir, 'last-error.json');

/** The error as a heartbeat carries it: the stable code when it has one, the message cut to 200 characters. */
export function lastErrorOf(err: unknown, at = new Date()): AgentLastError {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : 'INTERNAL',
    message: message.slice(0, 200),
    at: at.toISOString(),
  };
}

/**
 * Kept when `bcd` exits on an error (best effort: a full or read-only disk must not hide the error itself), so an agent
 * that crash-loops shows why in the heartbeats of each short life, and one that came back shows what it came back from.
 */
export function recordLastError(stateDir: string, err: unknown): void {
  try {
    writeFileDurably(fileOf(stateDir), JSON.stringify(lastErrorOf(err)), { mode: 0o600 });
  } catch {
    // The exit reports the error on stderr anyway.
  }
}

/** The error that stopped the previous process, or undefined (none, or a file that does not parse). */
export function readLastError(stateDir: string): AgentLastError | undefined {
  const file = fileOf(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    const parsed = AgentLastError.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
