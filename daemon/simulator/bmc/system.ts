import { BiosModel } from './bios.ts';
import { consumeBootOverride } from './boot.ts';
import type { VirtualMediaModel } from './media.ts';
import { PowerModel, type SimPowerState } from './power.ts';
import type { BmcQuirks } from './quirks.ts';
import type { Timers } from './timers.ts';
import type { SystemTopology } from './topology.ts';
import { isPlainObject, type Json, type TreeStore } from './treeStore.ts';

export interface BootEvent {
  bootTarget: string;
  bootCount: number;
  at: number;
}
export type BootListener = (bootTarget: string, event: BootEvent) => void;
/** The host stopped running: a power-off or a restart was accepted (fired before PowerState settles). */
export type PowerLossListener = (reason: 'off' | 'restart') => void;

export interface SimSystemState {
  readonly powerState: SimPowerState;
  readonly bootOverride: { target: unknown; enabled: unknown };
  readonly bootOverrideMode: unknown;
  readonly boots: readonly BootEvent[];
  readonly biosPending: Json;
  readonly nmiCount: number;
}

/**
 * One ComputerSystem of a simulated BMC, as the machine behind it sees it: the seam between the BMC's Redfish face and
 * whatever plays the host (file-backed simulated machines, a VM). The host listens for boots (with the boot source the
 * firmware picked: the override, or `Cd` for a one-shot virtual-media boot, or `None`) and power losses, reads the
 * mounted CD image, and reports power changes it makes by itself. What the system is (UUID, serial, MACs) is set with
 * the simulator's `systems` option.
 */
export interface SimSystem {
  /** `Id` of the ComputerSystem. */
  readonly id: string;
  /** Its `@odata.id`: the path a BMC address names it by. */
  readonly uri: string;
  readonly state: SimSystemState;
  onBoot(listener: BootListener): () => void;
  onPowerLoss(listener: PowerLossListener): () => void;
  /** The image URL in this system's CD/DVD slot (what a `Cd` boot reads), once the mount is visible. */
  insertedMedia(): string | undefined;
  /** The host powered itself on or off (a guest shutdown, a VM started by hand): PowerState follows. */
  reportPowerState(state: SimPowerState): void;
}

/** The live models of one system: power with its boots, BIOS settings, and the media slots it boots from. */
export class SystemModel implements SimSystem {
  readonly id: string;
  readonly uri: string;
  readonly doc: Json;
  readonly power: PowerModel;
  readonly bios: BiosModel;
  private readonly boots: BootEvent[] = [];
  private readonly bootListeners = new Set<BootListener>();
  private readonly lossListeners = new Set<PowerLossListener>();

  constructor(
    private readonly store: TreeStore,
    readonly topology: SystemTopology,
    private readonly media: VirtualMediaModel,
    timers: Timers,
    options: { powerDelayMs: number; quirks: BmcQuirks },
  ) {
    const doc = store.get(topology.key);
    if (!doc) throw new Error(`no ComputerSystem at ${topology.key}`);
    this.doc = doc;
    this.uri = typeof doc['@odata.id'] === 'string' ? doc['@odata.id'] : `/redfish/v1/${topology.key}`;
    this.id = typeof doc.Id === 'string' ? doc.Id : this.uri.split('/').pop()!;
    this.bios = new BiosModel(store, topology.biosKey, topology.biosSettingsKey, options.quirks.biosSettings === 'dropped');
    const lost = (reason: 'off' | 'restart') => {
      for (const listener of this.lossListeners) listener(reason);
    };
    this.power = new PowerModel(doc, topology.resetAllowed, options.powerDelayMs, timers, () => this.poweredOn(), lost, options.quirks.restart);
  }

  private poweredOn(): void {
    let target = consumeBootOverride(this.doc);
    if (target === 'None' && this.media.consumeBootOnNextReset(this.topology.mediaKeys)) target = 'Cd';
    this.bios.applyPending();
    const event: BootEvent = { bootTarget: target, bootCount: this.boots.length + 1, at: Date.now() };
    this.boots.push(event);
    for (const listener of this.bootListeners) listener(target, event);
  }

  get state(): SimSystemState {
    const boot = isPlainObject(this.doc.Boot) ? this.doc.Boot : {};
    const { power, bios, boots } = this;
    return {
      powerState: power.reported,
      bootOverride: { target: boot.BootSourceOverrideTarget, enabled: boot.BootSourceOverrideEnabled },
      bootOverrideMode: boot.BootSourceOverrideMode,
      boots: [...boots],
      biosPending: bios.pending,
      nmiCount: power.nmiCount,
    };
  }

  onBoot(listener: BootListener): () => void {
    this.bootListeners.add(listener);
    return () => this.bootListeners.delete(listener);
  }

  onPowerLoss(listener: PowerLossListener): () => void {
    this.lossListeners.add(listener);
    return () => this.lossListeners.delete(listener);
  }

  insertedMedia(): string | undefined {
    const slots = this.topology.mediaKeys.flatMap((key): Json[] => {
      const slot = this.store.get(key);
      return slot ? [slot] : [];
    });
    const typesOf = (slot: Json): unknown[] => (Array.isArray(slot.MediaTypes) ? slot.MediaTypes : []);
    // The CD the host sees: a CD/DVD slot, else (AMI lists no MediaTypes) the one named CD, else the first untyped.
    const untyped = slots.filter((slot) => typesOf(slot).length === 0);
    const cd =
      slots.find((slot) => typesOf(slot).includes('CD') || typesOf(slot).includes('DVD')) ??
      untyped.find((slot) => /cd|dvd/i.test(`${String(slot.Id ?? '')} ${String(slot.Name ?? '')}`)) ??
      untyped[0];
    return cd?.Inserted === true && typeof cd.Image === 'string' && cd.Image !== '' ? cd.Image : undefined;
  }

  reportPowerState(state: SimPowerState): void {
    this.power.hostPowered(state);
  }
}
