import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { BcxError } from '../bcxErrors.ts';

const run = promisify(execFile);

export interface PluginUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * The system account a plugin runs as: `bcx-` and a digest of the plugin id (account names stop at 32 characters and
 * a plugin id may not), so the same plugin gets the same account on every start and two plugins never share one.
 */
export const pluginUserName = (pluginId: string): string => `bcx-${createHash('sha256').update(pluginId).digest('hex').slice(0, 16)}`;

async function lookUp(name: string): Promise<PluginUser | undefined> {
  try {
    const { stdout } = await run('getent', ['passwd', name]);
    const [, , uid, gid] = stdout.trim().split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch (err) {
    // getent exits 2 when the key is not found; anything else is a failure to read the account database.
    if ((err as { code?: unknown }).code === 2) return undefined;
    throw new BcxError('PLUGIN_USER_FAILED', `getent passwd ${name} failed`, { cause: err });
  }
}

/** The plugin's account, created (no home, no login shell, its own group) the first time the plugin starts. */
export async function ensurePluginUser(pluginId: string): Promise<PluginUser> {
  const name = pluginUserName(pluginId);
  const existing = await lookUp(name);
  if (existing) return existing;
  try {
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      `bcx plugin ${pluginId}`.slice(0, 60),
      name,
    ]);
  } catch (err) {
    // Another start created it meanwhile (useradd exits 9 for a name in use).
    if ((err as { code?: unknown }).code !== 9) throw new BcxError('PLUGIN_USER_FAILED', `useradd ${name} failed`, { cause: err });
  }
  const created = await lookUp(name);
  if (!created) throw new BcxError('PLUGIN_USER_FAILED', `account ${name} was not created`);
  return created;
}
