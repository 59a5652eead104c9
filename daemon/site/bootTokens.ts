import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurably } from '../agent/durableFile.ts';

/**
 * One unguessable token per machine (32 random bytes, base64url), persisted in `<stateDir>/boot-tokens.json` so
 * URLs handed to BMCs and DHCP stay valid across agent restarts. A machine's iPXE script names the node it is
 * for, so the token is what keeps one machine from fetching (or guessing) another's boot configuration.
 */
export class BootTokens {
  readonly #file: string;
  readonly #tokens: Record<string, string>;

  constructor(stateDir: string) {
    this.#file = join(stateDir, 'boot-tokens.json');
    this.#tokens = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, 'utf8')) as Record<string, string>) : {};
  }

  tokenFor(nodeId: string): string {
    const existing = this.#tokens[nodeId];
    if (existing) return existing;
    const token = randomBytes(32).toString('base64url');
    this.#tokens[nodeId] = token;
    writeFileDurably(this.#file, JSON.stringify(this.#tokens, null, 2), { mode: 0o600 });
    return token;
  }

  /** Constant-time check, so response timing does not leak how much of a guess was right. */
  matches(nodeId: string, token: string): boolean {
    const expected = this.#tokens[nodeId];
    if (!expected) return false;
    const a = Buffer.from(expected);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
