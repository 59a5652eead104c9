import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { agentUserKeyOfSeed, createAgentUserKey } from '../../services/platform/nats/agentCredentials.ts';
import { syncFolder, writeFileDurably } from './durableFile.ts';

/** `<stateDir>/join-user.seed`: the NATS user key a join in progress was sent with (mode 0600). */
const seedFile = (stateDir: string) => join(stateDir, 'join-user.seed');

/**
 * The NATS user key an agent joins with under broker permissions, made once and kept durably until its membership is
 * saved (a ramdisk keeps it for its boot: its state folder is RAM, and /init restarts it on the boot's one token). The join service answers the same (token, agent key, user key) again, so an agent whose power
 * went between the control plane spending its token and its own membership reaching the disk sends the very same
 * join after the reboot and is let in; with a fresh user key it would be a new join of a spent token, refused for good.
 */
export function pendingJoinUserKey(stateDir: string): { publicKey: string; seed: Uint8Array } {
  const file = seedFile(stateDir);
  if (existsSync(file)) return agentUserKeyOfSeed(new Uint8Array(readFileSync(file)));
  const key = createAgentUserKey();
  writeFileDurably(file, key.seed, { mode: 0o600 });
  return key;
}

/** Once the membership holds the credentials, the pending key goes (a later join with a new token makes a new one). */
export function clearPendingJoin(stateDir: string): void {
  const file = seedFile(stateDir);
  if (!existsSync(file)) return;
  rmSync(file);
  syncFolder(stateDir);
}
