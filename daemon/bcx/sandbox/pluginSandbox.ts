import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, chown, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ensurePluginUser, type PluginUser } from './pluginUser.ts';
import { BcxError } from '../bcxErrors.ts';
import { seccompProgram } from './seccompFilter.ts';

export interface PluginLaunch {
  /** The plugin's id from its manifest: names its account and its state folder. */
  readonly pluginId: string;
  readonly executable: string;
  readonly args?: readonly string[];
  /** The daemon's state folder; the plugin's own is `<stateRoot>/plugins/<pluginId>`. */
  readonly stateRoot: string;
  /** Named in the daemon's privileged list: runs as root, without the seccomp filter. */
  readonly privileged?: boolean;
  readonly env?: Readonly<Record<string, string>>;
}

export interface LaunchedPlugin {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly stateDir: string;
  /** The account it runs as; none when privileged. */
  readonly user?: PluginUser;
}

const PLUGIN_ID = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

async function onPath(tool: string): Promise<string> {
  for (const dir of SYSTEM_PATH.split(':')) {
    const candidate = join(dir, tool);
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new BcxError('SANDBOX_UNAVAILABLE', `${tool} is not installed (Debian: ${tool === 'bwrap' ? 'bubblewrap' : 'util-linux'})`);
}

/** The plugin's state folder, its own and nobody else's (mode 0700): another plugin reading it gets EACCES. */
async function stateFolder(stateRoot: string, pluginId: string, owner: PluginUser | undefined): Promise<string> {
  const plugins = join(stateRoot, 'plugins');
  const dir = join(plugins, pluginId);
  try {
    await mkdir(plugins, { recursive: true, mode: 0o755 });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // A link planted in its place would hand the plugin (or take from it) a folder that is not its own.
    if (!(await lstat(dir)).isDirectory()) throw new Error(`${dir} is not a folder`);
    await chown(dir, owner?.uid ?? 0, owner?.gid ?? 0);
    await chmod(dir, 0o700);
  } catch (err) {
    throw new BcxError('PLUGIN_STATE_FAILED', `state folder ${dir}: ${(err as Error).message}`, { cause: err });
  }
  return dir;
}

/**
 * Starts a bcx plugin with its stdio as pipes (the protocol's channel). Unless privileged it runs under bubblewrap:
 * the host's tree read-only but for its own state folder and a private `/tmp`, the daemon's state hidden, a new session and IPC namespace, the
 * seccomp filter of `seccompFilter.ts`, and then `setpriv` drops it to its own account with no capabilities (bounding
 * set included) and `no_new_privs`, so no setuid binary gives them back. A host that cannot do all of that refuses
 * to start the plugin (`SANDBOX_UNAVAILABLE`): a plugin never silently runs unconfined.
 */
export async function launchPlugin(launch: PluginLaunch): Promise<LaunchedPlugin> {
  if (!PLUGIN_ID.test(launch.pluginId)) throw new BcxError('INVALID_PLUGIN_ID', `plugin id ${JSON.stringify(launch.pluginId)} is not a plugin id`);
  const args = [...(launch.args ?? [])];
  if (launch.privileged) {
    const stateDir = await stateFolder(launch.stateRoot, launch.pluginId, undefined);
    const child = spawn(launch.executable, args, { cwd: stateDir, env: environment(stateDir, launch.env), stdio: ['pipe', 'pipe', 'pipe'] });
    return { child, stateDir };
  }
  const program = seccompProgram();
  if (!program) throw new BcxError('SANDBOX_UNAVAILABLE', `no seccomp filter for ${process.arch}`);
  if (process.getuid?.() !== 0) throw new BcxError('SANDBOX_UNAVAILABLE', 'the daemon must run as root to give a plugin its own account');
  const [bwrap, setpriv] = await Promise.all([onPath('bwrap'), onPath('setpriv')]);
  const user = await ensurePluginUser(launch.pluginId);
  const stateDir = await stateFolder(launch.stateRoot, launch.pluginId, user);
  const child = spawn(
    bwrap,
    [
      '--die-with-parent',
      '--new-session',
      '--unshare-ipc',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      // The daemon's own state (its keys, its journal) is not the plugin's to read, whatever the files' modes say.
      '--tmpfs',
      launch.stateRoot,
      '--ro-bind',
      join(launch.stateRoot, 'plugins'),
      join(launch.stateRoot, 'plugins'),
      '--bind',
      stateDir,
      stateDir,
      '--chdir',
      stateDir,
      '--seccomp',
      '3',
      '--',
      setpriv,
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      '--clear-groups',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
      launch.executable,
      ...args,
    ],
    { env: environment(stateDir, launch.env), stdio: ['pipe', 'pipe', 'pipe', 'pipe'] },
  );
  // bubblewrap reads the filter from fd 3 to its end before it starts the plugin.
  // A bubblewrap that failed before reading it closes the pipe: its exit status tells why, not this write.
  (child.stdio[3] as Writable).on('error', () => undefined).end(program);
  return { child: child as unknown as LaunchedPlugin['child'], stateDir, user };
}

/** Only what a plugin needs: the daemon's own environment (its credentials' paths among it) is not passed on. */
function environment(stateDir: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { PATH: SYSTEM_PATH, HOME: stateDir, BCX_STATE_DIR: stateDir, LANG: 'C.UTF-8', ...extra };
}
