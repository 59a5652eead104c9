import { execFile } from 'node:child_process';
import { open, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { RuntimeInstanceStatus } from '../sdk/bcx/index.ts';
import type { MicroVmConfig } from './config.ts';
import { qemuCommand } from './qemuCommand.ts';
import { qmpCommand } from './qmp.ts';
import { qemuPid, type VmPaths, type VmRecord } from './vmFolder.ts';

const run = promisify(execFile);

/** QEMU's run states that are a failure of the guest or of QEMU, not a power state. */
const FAILED_RUN_STATES = new Set(['guest-panicked', 'internal-error', 'io-error']);

/**
 * Starts the VM: QEMU daemonizes once its devices are set up, so its exit status here says whether it started; a
 * failure comes back as QEMU's own words (stderr), for the instance's error message.
 */
export async function startVm(
  config: MicroVmConfig,
  paths: VmPaths,
  id: string,
  record: VmRecord,
): Promise<{ started: true } | { started: false; why: string }> {
  await rm(paths.qmpSocket, { force: true });
  const logFrom = await stat(paths.serialLog).then(
    (s) => s.size,
    () => 0,
  );
  try {
    await run(config.qemu, qemuCommand(config, paths, { name: `bcx-${id}`, vcpus: record.vcpus, memoryMiB: record.memoryMiB, forwards: record.forwards }), {
      timeout: 60_000,
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    return { started: false, why: `QEMU did not start: ${stderr || (err as Error).message}`.slice(0, 1_000) };
  }
  if (config.readyWhen === undefined) return { started: true };
  for (const until = Date.now() + config.readyTimeoutMs; Date.now() < until; await sleep(250)) {
    if (await printedSince(paths.serialLog, logFrom, config.readyWhen)) return { started: true };
    if (qemuPid(paths) === undefined) return { started: false, why: `the VM powered off before its console said ${JSON.stringify(config.readyWhen)}` };
  }
  // A guest that never came up holds its memory for nothing: off, its disk kept for a look.
  await stopVm(paths, 0);
  return { started: false, why: `the VM's console did not say ${JSON.stringify(config.readyWhen)} within ${config.readyTimeoutMs} ms of its start` };
}

/** Whether this boot's part of the serial log (from `offset`, where the log ended before QEMU started) holds `text`. */
async function printedSince(log: string, offset: number, text: string): Promise<boolean> {
  const file = await open(log, 'r').catch(() => undefined);
  if (!file) return false;
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(Math.max(0, size - offset));
    await file.read(buffer, 0, buffer.length, offset);
    return buffer.toString('utf8').includes(text);
  } finally {
    await file.close();
  }
}

const waitGone = async (paths: VmPaths, ms: number): Promise<boolean> => {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) if (qemuPid(paths) === undefined) return true;
  return qemuPid(paths) === undefined;
};

/**
 * Powers the VM off, its disk kept: the ACPI power button first (the image's acpid syncs and powers off), then, after
 * `graceMs`, QMP `quit`, then SIGKILL. A grace of 0 (a remove: the disk goes anyway) skips the button.
 */
export async function stopVm(paths: VmPaths, graceMs: number): Promise<void> {
  if (qemuPid(paths) === undefined) return;
  if (graceMs > 0) {
    await qmpCommand(paths.qmpSocket, 'system_powerdown').catch(() => undefined);
    if (await waitGone(paths, graceMs)) return cleanUp(paths);
  }
  await qmpCommand(paths.qmpSocket, 'quit').catch(() => undefined);
  if (!(await waitGone(paths, 5_000))) {
    const pid = qemuPid(paths);
    if (pid !== undefined) process.kill(pid, 'SIGKILL');
    await waitGone(paths, 5_000);
  }
  await cleanUp(paths);
}

const cleanUp = async (paths: VmPaths) => {
  await Promise.all([rm(paths.pidFile, { force: true }), rm(paths.qmpSocket, { force: true })]);
};

/** Where the VM is reachable, said as it is: host ports on loopback that QEMU's user-mode network forwards inside. */
const reachability = (record: VmRecord) => ({
  addresses: record.forwards.map((f) => `127.0.0.1:${f.host}`),
  message: `user-mode network (guest 10.0.2.15): ${record.forwards.map((f) => `127.0.0.1:${f.host} -> guest tcp/${f.guest}`).join(', ')}`,
});

/**
 * The VM's state as it is now: `error` while its record holds a failure; `stopped` without a live QEMU; otherwise
 * what QMP `query-status` says (`running`, or `error` for a panicked guest or a QEMU that stopped answering).
 */
export async function vmStatus(id: string, paths: VmPaths, record: VmRecord): Promise<RuntimeInstanceStatus> {
  if (record.error !== undefined) return { id, state: 'error', addresses: [], message: record.error };
  if (qemuPid(paths) === undefined) return { id, state: 'stopped', addresses: [] };
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const { status } = await qmpCommand<{ status: string }>(paths.qmpSocket, 'query-status');
      if (status === 'running') return { id, state: 'running', ...reachability(record) };
      if (FAILED_RUN_STATES.has(status)) return { id, state: 'error', addresses: [], message: `QEMU reports the VM ${status}` };
      return { id, state: 'error', addresses: [], message: `QEMU reports the VM ${status}, not running` };
    } catch (err) {
      lastError = err;
      await sleep(500);
    }
  }
  // The process is there (it died between the two checks, or it hangs): say which.
  if (qemuPid(paths) === undefined) return { id, state: 'stopped', addresses: [] };
  return { id, state: 'error', addresses: [], message: `QEMU runs but does not answer QMP: ${(lastError as Error).message}`.slice(0, 1_000) };
}
