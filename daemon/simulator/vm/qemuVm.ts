import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../services/platform/logger.ts';
import { QmpClient } from './qmpClient.ts';
import { debianOvmf, qemuArgs, type BootTarget, type VmConfig, type VmFirmware } from './qemuArgs.ts';
import { VmError } from './vmErrors.ts';

/** Why QEMU ended: the guest powered off, the guest rebooted (`-no-reboot`), we stopped it, or it died. */
export type VmExit = 'guest-shutdown' | 'guest-reset' | 'host' | 'crash';

export interface QemuVmOptions {
  config: VmConfig;
  /** Run QEMU inside this network namespace (where the VM's taps are). */
  netns?: string;
  qemuBinary?: string;
  firmware?: VmFirmware;
  /** Called once per QEMU process when it ends on its own (not after `stop()`). */
  onExit?: (reason: VmExit) => void;
  log: Logger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One QEMU process per power-on of a virtual machine, driven over QMP. Powered off = no process; the disks, the
 * UEFI variables and the serial log outlive it, as a server's do.
 */
export class QemuVm {
  readonly paths: { qmp: string; serial: string; uefiVars?: string };
  #child: ChildProcess | undefined;
  #qmp: QmpClient | undefined;
  #exited: Promise<void> | undefined;
  #stopping = false;
  #lastShutdownReason: string | undefined;
  #lastResetAt: Date | undefined;
  #lastExitAt: Date | undefined;

  constructor(readonly options: QemuVmOptions) {
    const { runDir, name, firmware } = options.config;
    mkdirSync(runDir, { recursive: true });
    this.paths = {
      qmp: join(runDir, `${name}.qmp`),
      serial: join(runDir, `${name}.serial.log`),
      ...(firmware === 'uefi' ? { uefiVars: join(runDir, `${name}.vars.fd`) } : {}),
    };
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  get qmp(): QmpClient | undefined {
    return this.#qmp;
  }

  /**
   * When the machine last came out of reset: the start of a QEMU process (a cold power-on) or a `RESET` event of the
   * running one (`system_reset`, or a guest reboot where QEMU runs without `-no-reboot`). What a BMC reports as
   * `LastResetTime`; kept while the machine is off.
   */
  get lastResetAt(): Date | undefined {
    return this.#lastResetAt;
  }

  /** When the last QEMU process ended (the machine lost power); undefined before the first. */
  get lastExitAt(): Date | undefined {
    return this.#lastExitAt;
  }

  /** QEMU still runs but is on its way out: asked to quit, or the guest shut down (`SHUTDOWN` event). */
  get stopping(): boolean {
    return this.#child !== undefined && (this.#stopping || this.#lastShutdownReason !== undefined);
  }

  /** Powers on: starts QEMU booting `target`, with `cdImage` in the CD drive; resolves once QMP answers. */
  async start(boot: { target: BootTarget; cdImage?: string }): Promise<void> {
    if (this.#child) throw new VmError('VM_START_FAILED', `${this.options.config.name} is already running`);
    const firmware = this.options.firmware ?? debianOvmf;
    if (this.paths.uefiVars && !existsSync(this.paths.uefiVars)) copyFileSync(firmware.varsTemplate, this.paths.uefiVars);
    rmSync(this.paths.qmp, { force: true });
    const binary = this.options.qemuBinary ?? 'qemu-system-x86_64';
    const args = qemuArgs(this.options.config, this.paths, boot, firmware);
    const [command, argv] = this.options.netns ? ['ip', ['netns', 'exec', this.options.netns, binary, ...args]] : [binary, args];
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    this.#child = child;
    this.#stopping = false;
    this.#lastShutdownReason = undefined;
    this.#exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        const reason: VmExit = this.#stopping
          ? 'host'
          : this.#lastShutdownReason === 'guest-shutdown'
            ? 'guest-shutdown'
            : this.#lastShutdownReason === 'guest-reset'
              ? 'guest-reset'
              : 'crash';
        if (reason === 'crash') this.options.log.warn({ vm: this.options.config.name, code, signal, stderr: stderr.trim() }, 'QEMU exited');
        this.#qmp?.close();
        this.#qmp = undefined;
        this.#child = undefined;
        this.#lastExitAt = new Date();
        resolve();
        if (reason !== 'host') this.options.onExit?.(reason);
      });
    });
    child.once('error', () => undefined);
    try {
      this.#qmp = await this.#connectQmp(() => stderr);
    } catch (err) {
      await this.stop();
      throw err;
    }
    // QMP answers once QEMU runs (started without -S): its vCPUs are executing the firmware from the reset vector.
    this.#lastResetAt = new Date();
    this.#qmp.onEvent((event) => {
      if (event.event === 'SHUTDOWN') this.#lastShutdownReason = typeof event.data.reason === 'string' ? event.data.reason : '';
      if (event.event === 'RESET') this.#lastResetAt = new Date(event.timestamp.seconds * 1000 + Math.floor(event.timestamp.microseconds / 1000));
    });
  }

  async #connectQmp(stderr: () => string): Promise<QmpClient> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (!this.#child) throw new VmError('VM_START_FAILED', `QEMU exited during start-up: ${stderr().trim()}`);
      if (existsSync(this.paths.qmp)) {
        try {
          return await QmpClient.connect(this.paths.qmp);
        } catch (err) {
          if (Date.now() > deadline) throw err;
        }
      }
      if (Date.now() > deadline) throw new VmError('VM_START_FAILED', `no QMP socket after 15 s: ${stderr().trim()}`);
      await sleep(50);
    }
  }

  /** Pulls the plug: `quit` over QMP, SIGKILL if QEMU does not go within 5 s. Resolves when the process is gone. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#stopping = true;
    const exited = this.#exited;
    try {
      await this.#qmp?.execute('quit');
    } catch {
      // QEMU may close the socket before answering `quit`; the exit below is what counts.
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  /** Presses the ACPI power button (`system_powerdown`); the guest decides whether to power off. */
  async powerButton(): Promise<void> {
    await this.#requireQmp('system_powerdown').execute('system_powerdown');
  }

  async injectNmi(): Promise<void> {
    await this.#requireQmp('inject-nmi').execute('inject-nmi');
  }

  /** Puts `file` in the running VM's CD drive, or empties it (the guest sees a media change). */
  async changeMedium(file: string | undefined): Promise<void> {
    const qmp = this.#requireQmp('blockdev-change-medium');
    if (file) await qmp.execute('blockdev-change-medium', { id: 'cd0-dev', filename: file, format: 'raw', 'read-only-mode': 'read-only' });
    else await qmp.execute('blockdev-remove-medium', { id: 'cd0-dev' }).catch(async () => qmp.execute('eject', { id: 'cd0-dev', force: true }));
  }

  /** `query-status`: `running`, `paused`, `shutdown`, …; `off` when no QEMU runs. */
  async status(): Promise<string> {
    if (!this.#qmp) return 'off';
    const status = await this.#qmp.execute<{ status: string }>('query-status');
    return status.status;
  }

  #requireQmp(what: string): QmpClient {
    if (!this.#qmp) throw new VmError('QMP_CLOSED', `${this.options.config.name} is off: cannot ${what}`);
    return this.#qmp;
  }
}
