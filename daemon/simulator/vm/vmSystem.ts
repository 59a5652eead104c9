import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../../../services/platform/logger.ts';
import type { BootTarget, VmConfig, VmFirmware } from './qemuArgs.ts';
import { QemuVm, type VmExit } from './qemuVm.ts';
import {
  SystemRefusal,
  type BootOverride,
  type ResetEvidence,
  type SystemBackend,
  type SystemInventory,
  type SystemPowerState,
  type SystemResetType,
  type VirtualMediaState,
} from './systemBackend.ts';

export interface VmSystemOptions {
  /** The Redfish system id (`/redfish/v1/Systems/<id>`). */
  id: string;
  config: VmConfig;
  netns?: string;
  firmware?: VmFirmware;
  /** Largest image InsertMedia fetches (default 4 GiB). */
  maxMediaBytes?: number;
  log: Logger;
}

/**
 * A computer system that is a QEMU VM. Power is the QEMU process; a boot override decides the firmware's boot
 * order at the next power-on (a `Once` override is spent by it, as DSP0268 says); a guest reboot is a power-on like
 * any other; InsertMedia downloads the image first, as a BMC does, then puts it in the CD drive. Operations run one
 * at a time, so a reset racing the guest's own shutdown cannot start two QEMUs.
 */
export class VmSystem implements SystemBackend {
  readonly id: string;
  readonly vm: QemuVm;
  #override: BootOverride = { target: 'None', enabled: 'Disabled' };
  #media: VirtualMediaState & { file?: string } = { image: null, inserted: false };
  #queue: Promise<unknown> = Promise.resolve();
  #powerOnAfterShutdown = false;
  #closed = false;
  /** Set while a power-on starts QEMU (until QMP answers). */
  #poweringOn = false;
  /** Disk sizes as of the last power-on (or `refreshDiskSizes`). */
  readonly #sizes = new Map<string, number>();

  constructor(readonly options: VmSystemOptions) {
    this.id = options.id;
    this.vm = new QemuVm({
      config: options.config,
      ...(options.netns ? { netns: options.netns } : {}),
      ...(options.firmware ? { firmware: options.firmware } : {}),
      onExit: (reason) => void this.#serial(() => this.#afterExit(reason)),
      log: options.log,
    });
  }

  powerState(): SystemPowerState {
    if (this.#poweringOn) return 'PoweringOn';
    if (this.vm.stopping) return 'PoweringOff';
    return this.vm.running ? 'On' : 'Off';
  }

  /**
   * From QEMU's own life: its start (or `RESET` event) is the reset, and it is all a BMC can say of the boot's progress
   * (the vCPUs run the firmware); a machine off is `None` since its QEMU ended. A restart (PowerCycle, ForceRestart, a
   * guest reboot) is a new QEMU, so `LastResetTime` moves with every one of them, as a real BMC's does.
   */
  resetEvidence(): ResetEvidence {
    const reset = this.vm.lastResetAt?.toISOString() ?? null;
    const exited = this.vm.lastExitAt?.toISOString();
    if (reset === null) return { lastResetTime: null, bootProgress: null };
    const off = !this.vm.running && exited !== undefined;
    return {
      lastResetTime: reset,
      bootProgress: off ? { lastState: 'None', lastStateTime: exited } : { lastState: 'PrimaryProcessorInitializationStarted', lastStateTime: reset },
    };
  }

  bootOverride(): BootOverride {
    return { ...this.#override };
  }

  setBootOverride(override: Partial<BootOverride>): void {
    this.#override = { ...this.#override, ...override };
  }

  media(): VirtualMediaState {
    return { image: this.#media.image, inserted: this.#media.inserted };
  }

  reset(type: SystemResetType): Promise<void> {
    return this.#serial(async () => {
      const on = this.vm.running;
      const refuse = () => {
        throw new SystemRefusal('INVALID_IN_STATE', `ResetType ${type} while the system is ${on ? 'On' : 'Off'}`);
      };
      switch (type) {
        case 'On':
          return on ? refuse() : this.#powerOn();
        case 'ForceOff':
          return on ? this.vm.stop() : refuse();
        case 'GracefulShutdown':
          return on ? this.vm.powerButton() : refuse();
        case 'GracefulRestart':
          if (!on) return refuse();
          this.#powerOnAfterShutdown = true;
          return this.vm.powerButton();
        case 'ForceRestart':
          if (!on) return refuse();
          await this.vm.stop();
          return this.#powerOn();
        case 'PowerCycle':
          if (on) await this.vm.stop();
          return this.#powerOn();
        case 'Nmi':
          return on ? this.vm.injectNmi() : refuse();
      }
    });
  }

  insertMedia(url: string): Promise<void> {
    return this.#serial(async () => {
      if (this.#media.inserted) throw new SystemRefusal('INVALID_IN_STATE', 'InsertMedia while media is inserted');
      const file = join(this.options.config.runDir, `${this.options.config.name}.media.iso`);
      await this.#fetchImage(url, file);
      if (this.vm.running) await this.vm.changeMedium(file);
      this.#media = { image: url, inserted: true, file };
    });
  }

  ejectMedia(): Promise<void> {
    return this.#serial(async () => {
      if (!this.#media.inserted) throw new SystemRefusal('INVALID_IN_STATE', 'EjectMedia while no media is inserted');
      if (this.vm.running) await this.vm.changeMedium(undefined);
      if (this.#media.file) await rm(this.#media.file, { force: true });
      this.#media = { image: null, inserted: false };
    });
  }

  inventory(): SystemInventory {
    const { config } = this.options;
    return {
      uuid: config.uuid,
      cpus: config.cpus,
      memoryMiB: config.memoryMiB,
      nics: config.nics.map((nic, i) => ({ id: `NIC${i + 1}`, mac: nic.mac.toLowerCase() })),
      disks: config.disks.flatMap((disk, i) =>
        disk.hiddenFromBmc ? [] : [{ id: `Disk${i + 1}`, serial: disk.serial, sizeBytes: this.#sizes.get(disk.file) ?? 0 }],
      ),
    };
  }

  /** Reads the disks' sizes again (a raw file's size is the disk's); done at each power-on. */
  async refreshDiskSizes(): Promise<void> {
    for (const disk of this.options.config.disks) this.#sizes.set(disk.file, (await stat(disk.file)).size);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#serial(() => this.vm.stop());
  }

  async #powerOn(): Promise<void> {
    let target: BootTarget = 'None';
    if (this.#override.enabled !== 'Disabled') target = this.#override.target;
    if (this.#override.enabled === 'Once') this.#override = { ...this.#override, enabled: 'Disabled' };
    await this.refreshDiskSizes();
    this.#poweringOn = true;
    try {
      await this.vm.start({ target, ...(this.#media.inserted && this.#media.file ? { cdImage: this.#media.file } : {}) });
    } finally {
      this.#poweringOn = false;
    }
    this.options.log.info({ system: this.id, boot: target }, 'VM powered on');
  }

  async #afterExit(reason: VmExit): Promise<void> {
    if (this.#closed || this.vm.running) return;
    // A guest reboot is the next boot; so is the power-on half of a GracefulRestart.
    const again = reason === 'guest-reset' || (reason === 'guest-shutdown' && this.#powerOnAfterShutdown);
    this.#powerOnAfterShutdown = false;
    if (again) await this.#powerOn();
    else this.options.log.info({ system: this.id, reason }, 'VM powered off');
  }

  async #fetchImage(url: string, file: string): Promise<void> {
    const max = this.options.maxMediaBytes ?? 4 * 1024 ** 3;
    let response: Response;
    try {
      response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(600_000) });
    } catch (cause) {
      throw new SystemRefusal('MEDIA_UNAVAILABLE', `image ${new URL(url).host} unreachable`, { cause });
    }
    if (!response.ok || !response.body) throw new SystemRefusal('MEDIA_UNAVAILABLE', `image fetch answered ${response.status}`);
    let seen = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) controller.error(new SystemRefusal('MEDIA_UNAVAILABLE', `image larger than ${max} bytes`));
        else controller.enqueue(chunk);
      },
    });
    const partial = `${file}.part`;
    try {
      await pipeline(Readable.fromWeb(response.body.pipeThrough(limit) as never), createWriteStream(partial));
      await rename(partial, file);
    } catch (cause) {
      await rm(partial, { force: true });
      throw cause instanceof SystemRefusal ? cause : new SystemRefusal('MEDIA_UNAVAILABLE', 'image download failed', { cause });
    }
  }

  #serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(op, op);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
