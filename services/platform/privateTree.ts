import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The creation mask of a control-plane process and of the nats-server it starts: what they create (read models and
 * their `-wal`/`-shm`, the JetStream store, keys, credentials) is the owner's only, folders 0700 and files 0600: the
 * log and the read models hold tenants' SSH keys and user data, sealed secrets and the broker's trust chain sit beside.
 */
export const PRIVATE_UMASK = 0o077;

/** Sets the process's creation mask to `PRIVATE_UMASK`; children it spawns from now on inherit it. */
export function usePrivateUmask(): void {
  process.umask(PRIVATE_UMASK);
}

/** Creates `dir` (and its parents) if missing, and makes it 0700 whatever mode it had. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Makes everything under `dir` private: folders 0700, files 0600 (what a version before private modes, or another
 * umask, left 0755/0644). Symbolic links are left alone, and so is what they point to.
 */
export function restrictTree(dir: string): void {
  const stat = lstatSync(dir, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return;
  if (!stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o600) chmodSync(dir, 0o600);
    return;
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir)) restrictTree(join(dir, entry));
}
