import { BaseMessages, notAllowedNow, redfishError, success, type SimResponse } from './responses.ts';
import type { Timers } from './timers.ts';
import type { BmcQuirks } from './quirks.ts';
import { touch, type Json } from './treeStore.ts';

export type SimPowerState = 'On' | 'Off';
type Effect = 'on' | 'off' | 'restart' | 'nmi';

/**
 * What each ResetType does from On / Off. `undefined` means the BMC refuses it in that state, the way iLO answers
 * "InvalidOperationForSystemState": a client that sends On to a running machine, or ForceRestart to a stopped
 * one, is caught here instead of passing silently.
 */
const effects: Record<string, (isOn: boolean) => Effect | undefined> = {
  On: (isOn) => (isOn ? undefined : 'on'),
  ForceOn: (isOn) => (isOn ? undefined : 'on'),
  ForceOff: (isOn) => (isOn ? 'off' : undefined),
  GracefulShutdown: (isOn) => (isOn ? 'off' : undefined),
  ForceRestart: (isOn) => (isOn ? 'restart' : undefined),
  GracefulRestart: (isOn) => (isOn ? 'restart' : undefined),
  PowerCycle: (isOn) => (isOn ? 'restart' : 'on'),
  FullPowerCycle: (isOn) => (isOn ? 'restart' : 'on'),
  PushPowerButton: (isOn) => (isOn ? 'off' : 'on'),
  Nmi: (isOn) => (isOn ? 'nmi' : undefined),
};

export const modelledResetTypes: readonly string[] = Object.keys(effects);

/**
 * System power with a settle delay: `PowerState` keeps showing the old value (`PoweringOn` during a restart) until
 * `delayMs` has passed, as a real BMC does while the host sequences power, so a client has to poll rather than trust
 * the 200.
 */
export class PowerModel {
  private intended: SimPowerState;
  nmiCount = 0;

  constructor(
    private readonly system: Json,
    private readonly allowed: readonly string[] | undefined,
    private readonly delayMs: number,
    private readonly timers: Timers,
    private readonly onPoweredOn: () => void,
    private readonly onPowerLoss: (reason: 'off' | 'restart') => void = () => undefined,
    /** How a restart shows (see `BmcQuirks.restart`). */
    private readonly restart: BmcQuirks['restart'] = 'visible',
  ) {
    this.intended = system.PowerState === 'Off' ? 'Off' : 'On';
    system.PowerState = this.intended;
  }

  get reported(): SimPowerState {
    return this.system.PowerState === 'Off' ? 'Off' : 'On';
  }

  /** The host changed power by itself (a guest shut down, a VM was started): the BMC reports what the host does. */
  hostPowered(state: SimPowerState): void {
    this.intended = state;
    this.system.PowerState = state;
    touch(this.system);
  }

  reset(body: Json): SimResponse {
    const type = body.ResetType;
    if (typeof type !== 'string') {
      return redfishError(400, BaseMessages.ActionParameterMissing, 'The action requires the parameter ResetType.');
    }
    const effectOf = effects[type];
    if (!effectOf || !(this.allowed ?? modelledResetTypes).includes(type)) {
      return redfishError(400, BaseMessages.ActionParameterNotSupported, `The parameter ResetType with the value ${type} is not supported by this system.`);
    }
    const effect = effectOf(this.intended === 'On');
    if (effect === undefined) return notAllowedNow(`ResetType ${type} while the system is ${this.intended}`);
    if (effect === 'nmi') {
      this.nmiCount += 1;
      return success();
    }
    // Firmware that answers 200 to a restart and does nothing: the case a client must not report as restarted.
    if (effect === 'restart' && this.restart === 'ignored') return success();
    this.intended = effect === 'off' ? 'Off' : 'On';
    // The host stops running the moment a reset is accepted, before PowerState settles.
    if (effect === 'off' || effect === 'restart') this.onPowerLoss(effect);
    // A restart goes On → On: without the transitional state (which iDRAC and iLO report too) a client could not tell
    // a reset that has not happened yet from one that is over, and would set the next boot override into a POST
    // that is still to come.
    if (effect === 'restart' && this.restart === 'visible') this.system.PowerState = 'PoweringOn';
    touch(this.system);
    this.timers.after(this.delayMs, () => {
      this.system.PowerState = effect === 'off' ? 'Off' : 'On';
      // Stamped when the host comes up (its POST starts), so the evidence never runs ahead of the boot it reports.
      if (effect !== 'off' && this.restart !== 'traceless') this.system.LastResetTime = new Date().toISOString();
      touch(this.system);
      if (effect !== 'off') this.onPoweredOn();
    });
    return success();
  }
}
