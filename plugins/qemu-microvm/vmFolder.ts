import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

/** A unix socket's path must fit `sun_path` (108 bytes with its NUL). */
const SUN_PATH_MAX = 107;
/** What `bcd node` names instances with (a UUID, a slot id); anything else cannot name a folder safely. */
const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** One VM's files, all under the plugin's state folder: a restarted plugin finds every VM from here alone. */
export interface VmPaths {
  readonly dir: string;
  readonly record: string;
  readonly overlay: string;
  readonly seed: string;
  readonly pidFile: string;
  readonly qmpSocket: string;
  readonly serialLog: string;
}

/** What the runtime keeps about a VM beside its disk: how it was made, and the last failure it answered. */
export interface VmRecord {
  readonly image: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** Host ports chosen at creation, kept across stops so an instance's addresses do not move. */
  readonly forwards: readonly { host: number; guest: number }[];
  /** Set while the VM is in error (its image missing, QEMU refusing to start): `list` answers it until an apply mends it. */
  readonly error?: string;
}

export const validInstanceId = (id: string): boolean => INSTANCE_ID.test(id);

export function vmPaths(stateDir: string, id: string): VmPaths {
  const dir = join(stateDir, 'vms', id);
  // The socket is named by a digest of the id in a short folder: an id of 128 characters still fits sun_path.
  const qmpSocket = join(stateDir, 'qmp', `${createHash('sha256').update(id).digest('hex').slice(0, 16)}.sock`);
  if (qmpSocket.length > SUN_PATH_MAX) throw new RangeError(`the state folder ${stateDir} is too deep for a QMP socket path`);
  return {
    dir,
    record: join(dir, 'vm.json'),
    overlay: join(dir, 'disk.qcow2'),
    seed: join(dir, 'cidata.img'),
    pidFile: join(dir, 'qemu.pid'),
    qmpSocket,
    serialLog: join(dir, 'serial.log'),
  };
}

export async function readRecord(paths: VmPaths): Promise<VmRecord | undefined> {
  try {
    return JSON.parse(await readFile(paths.record, 'utf8')) as VmRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Written whole or not at all (temp file, fsync, rename): a plugin killed mid-write leaves the previous record. */
export async function writeRecord(paths: VmPaths, record: VmRecord): Promise<void> {
  const temp = `${paths.record}.tmp`;
  const file = await open(temp, 'w', 0o600);
  try {
    await file.writeFile(JSON.stringify(record));
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, paths.record);
}

/**
 * The VM's QEMU process, if it is alive: the pid in its pidfile, not a zombie, and still QEMU with this VM's QMP
 * socket on its command line (a pid reused by another process after a reboot of the host is not the VM).
 */
export function qemuPid(paths: VmPaths): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(paths.pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    if (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] === 'Z') return undefined;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(paths.qmpSocket) ? pid : undefined;
  } catch {
    return undefined;
  }
}
