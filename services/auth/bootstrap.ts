import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandBus } from '../platform/commands/commandBus.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { createPrivateFileOnce } from '../platform/privateFile.ts';
import type { Logger } from '../platform/logger.ts';
import { hashSecret, mintToken, parseToken } from './bearer.ts';
import { tokenAggregate } from './token/token.ts';

/** The id of the admin token a fresh control plane creates for itself. */
export const bootstrapTokenId = 'bootstrap-admin';

/** Where the bootstrap admin token is written (mode 0600): `<dataDir>/admin.token`. */
export const adminTokenFile = (dataDir: string) => join(dataDir, 'admin.token');

/** The bootstrap admin token, for local tools (the CLI, tests) that share the data dir; undefined when there is none. */
export function readAdminToken(dataDir: string): string | undefined {
  const file = adminTokenFile(dataDir);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * First start: when the log has no bootstrap admin token yet, make one, write it to `<dataDir>/admin.token` and create
 * it by command (its hash only). Logs the file's path, never the token. Once the token exists in the log (even
 * revoked) nothing is created again: an operator who revoked it meant it.
 */
export async function ensureAdminToken(bus: CommandBus, dataDir: string, log: Logger): Promise<void> {
  const { state } = await bus.repository.load(tokenAggregate, bootstrapTokenId);
  const file = adminTokenFile(dataDir);
  if (state.exists) return;
  // Temp file + hard link: API processes starting at once on one data dir agree on the first token, and send one hash.
  createPrivateFileOnce(file, () => `${mintToken(bootstrapTokenId).token}\n`);
  const parsed = parseToken(readFileSync(file, 'utf8').trim());
  if (!parsed || parsed.tokenId !== bootstrapTokenId) throw new Error(`${file} does not hold a bootstrap admin token; remove it to have a new one made`);
  const secretHash = hashSecret(parsed.secret);
  try {
    await bus.execute({
      name: 'auth.createToken',
      payload: { tokenId: bootstrapTokenId, role: 'admin', secretHash, description: 'bootstrap admin token' },
      // The same file gives the same command id, so concurrent first starts append one event.
      commandId: `bootstrap-admin-${secretHash.slice(0, 16)}`,
      actor: 'bootstrap',
    });
    log.info({ file }, 'bootstrap admin token created');
  } catch (err) {
    // Another data dir's API created it first: this file's token is not the one in the log.
    if (!(err instanceof PlatformError && err.code === 'ALREADY_EXISTS')) throw err;
    log.warn({ file }, 'a bootstrap admin token already exists in the log; the token in this file is not it');
  }
}
