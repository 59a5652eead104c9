import type { ClientContext } from './clientContext.ts';
import { act } from './context.ts';
import { RedfishError } from './errors.ts';
import { obj, str, type Json } from './json.ts';
import { allowableValues, findAction, type ActionRef } from './links.ts';
import { pollUntil, pollWithin } from './poll.ts';

export const PowerActions = ['on', 'off', 'cycle', 'softOff'] as const;
export type PowerAction = (typeof PowerActions)[number];

export const PowerStates = ['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused', 'Unknown'] as const;
export type PowerState = (typeof PowerStates)[number];

export interface SetPowerResult {
  action: PowerAction;
  before: 'On' | 'Off';
  after: 'On' | 'Off';
  /** ResetTypes sent, in order; empty when the machine was already where the action leads. */
  resetTypes: string[];
  /**
   * How a restart of a running machine was seen to happen: its PowerState left On, the BMC's reset evidence changed
   * (LastResetTime, BootProgress, a consumed one-time override, iLO's PostState), or — when the restart left no trace —
   * by the hard off-then-on that replaced it. Absent for plain on/off, which the PowerState itself confirms.
   */
  observed?: 'powerState' | 'resetEvidence' | 'offThenOn';
}

// Used when the BMC declares no allowable values at all (DSP0268 lists these for ComputerSystem.Reset).
const standardResetTypes = ['On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn', 'PushPowerButton', 'PowerCycle'];

/**
 * ResetTypes to try, best first, by action and current state. Decided from the state read *before* acting,
 * because the same word means different things: "cycle" on a machine that is Off must power it On (a
 * ForceRestart would be refused or ignored), and "on" for a machine already On must not reset it.
 */
const plans: Record<PowerAction, { target: 'On' | 'Off'; fromOn: string[]; fromOff: string[] }> = {
  on: { target: 'On', fromOn: [], fromOff: ['On', 'ForceOn', 'PushPowerButton'] },
  off: { target: 'Off', fromOn: ['ForceOff'], fromOff: [] },
  softOff: { target: 'Off', fromOn: ['GracefulShutdown', 'PushPowerButton'], fromOff: [] },
  cycle: {
    target: 'On',
    fromOn: ['PowerCycle', 'ForceRestart', 'GracefulRestart'],
    fromOff: ['On', 'ForceOn', 'PowerCycle', 'PushPowerButton'],
  },
};

function asPowerState(value: unknown): PowerState {
  const text = str(value);
  return (PowerStates as readonly string[]).includes(text ?? '') ? (text as PowerState) : 'Unknown';
}

export async function getPowerState(ctx: ClientContext): Promise<PowerState> {
  return asPowerState((await ctx.discovery.system()).body.PowerState);
}

async function settledState(ctx: ClientContext, what: string): Promise<'On' | 'Off'> {
  const state = await pollUntil(
    () => getPowerState(ctx),
    (s) => s === 'On' || s === 'Off',
    {
      intervalMs: ctx.timing.pollIntervalMs,
      timeoutMs: ctx.timing.powerTimeoutMs,
      what,
    },
  );
  return state === 'On' ? 'On' : 'Off';
}

async function resetAction(ctx: ClientContext): Promise<{ action: ActionRef; allowed: string[] }> {
  const action = findAction((await ctx.discovery.system()).body, '#ComputerSystem.Reset');
  if (!action) throw new RedfishError('REDFISH_UNSUPPORTED', 'ComputerSystem has no #ComputerSystem.Reset action');
  return { action, allowed: (await allowableValues(ctx.http, action, 'ResetType')) ?? standardResetTypes };
}

async function reset(ctx: ClientContext, action: ActionRef, resetType: string, target: 'On' | 'Off'): Promise<void> {
  await act(ctx, action.target, { ResetType: resetType });
  await pollUntil(
    () => getPowerState(ctx),
    (s) => s === target,
    {
      intervalMs: ctx.timing.pollIntervalMs,
      timeoutMs: ctx.timing.powerTimeoutMs,
      what: `PowerState to become ${target} after ${resetType}`,
    },
  );
}

/** What a BMC changes when the host resets, beside PowerState. Each is read where the BMC has it; absent ones are ignored. */
function resetEvidence(system: Json): string[] {
  const progress = obj(system.BootProgress);
  return [system.LastResetTime, progress.LastStateTime, progress.LastState, obj(obj(system.Oem).Hpe).PostState].map((v) => JSON.stringify(v ?? null));
}

/**
 * Sends a restart type to a running machine and watches for it to happen: a PowerState other than On, or changed
 * reset evidence, within `resetObserveMs`. A BMC that answers 200 and does nothing shows neither, and then this
 * resolves undefined instead of pretending the machine restarted.
 */
async function observedRestart(ctx: ClientContext, action: ActionRef, resetType: string): Promise<'powerState' | 'resetEvidence' | undefined> {
  const before = (await ctx.discovery.system()).body;
  const evidence = resetEvidence(before);
  const armedOnce = obj(before.Boot).BootSourceOverrideEnabled === 'Once';
  await act(ctx, action.target, { ResetType: resetType });
  let seen: 'powerState' | 'resetEvidence' | undefined;
  await pollWithin(
    async () => (await ctx.discovery.system()).body,
    (system) => {
      const state = asPowerState(system.PowerState);
      if (state !== 'On' && state !== 'Unknown') seen = 'powerState';
      // A one-time override is spent by the POST it was armed for: the firmware saw the reset.
      else if (resetEvidence(system).some((v, i) => v !== evidence[i]) || (armedOnce && obj(system.Boot).BootSourceOverrideEnabled !== 'Once'))
        seen = 'resetEvidence';
      return seen !== undefined;
    },
    { intervalMs: ctx.timing.pollIntervalMs, timeoutMs: ctx.timing.resetObserveMs },
  );
  if (seen === 'powerState') {
    // Through Off or PoweringOn, however the BMC shows it: a restart is over when the machine is On again.
    await pollUntil(
      () => getPowerState(ctx),
      (s) => s === 'On',
      {
        intervalMs: ctx.timing.pollIntervalMs,
        timeoutMs: ctx.timing.powerTimeoutMs,
        what: `PowerState to return to On after ${resetType}`,
      },
    );
  }
  return seen;
}

export async function setPower(ctx: ClientContext, powerAction: PowerAction): Promise<SetPowerResult> {
  const plan = plans[powerAction];
  if (!plan) throw new RedfishError('REDFISH_BAD_REQUEST', `Unknown power action ${String(powerAction)}`);
  // A machine caught mid-transition is waited out, so the decision below is made on a stable state.
  const before = await settledState(ctx, 'PowerState to settle before acting');
  const candidates = before === 'On' ? plan.fromOn : plan.fromOff;
  const result: SetPowerResult = { action: powerAction, before, after: before, resetTypes: [] };
  if (candidates.length === 0) return result;

  const { action, allowed } = await resetAction(ctx);
  const chosen = candidates.find((type) => allowed.includes(type));
  const on = plans.on.fromOff.find((type) => allowed.includes(type));
  const offThenOn = async (sent: string[]): Promise<SetPowerResult> => {
    if (!allowed.includes('ForceOff') || on === undefined) {
      if (sent.length === 0)
        throw new RedfishError(
          'REDFISH_UNSUPPORTED',
          `BMC allows none of ${candidates.join(', ')} for "cycle" from On, nor ForceOff and On (allowed: ${allowed.join(', ')})`,
        );
      throw new RedfishError(
        'REDFISH_RESET_NOT_OBSERVED',
        `BMC accepted ${sent.join(', ')} but the machine never reset, and it allows no ForceOff and On to do it by hand`,
      );
    }
    await act(ctx, action.target, { ResetType: 'ForceOff' });
    const off = await pollWithin(
      () => getPowerState(ctx),
      (s) => s === 'Off',
      { intervalMs: ctx.timing.pollIntervalMs, timeoutMs: ctx.timing.powerTimeoutMs },
    );
    if (!off.done) throw new RedfishError('REDFISH_RESET_NOT_OBSERVED', `BMC accepted ${[...sent, 'ForceOff'].join(', ')} but the machine stayed ${off.value}`);
    await reset(ctx, action, on, 'On');
    return { ...result, after: 'On', resetTypes: [...sent, 'ForceOff', on], observed: 'offThenOn' };
  };

  if (powerAction === 'cycle' && before === 'On') {
    // No restart type at all: a cycle is still possible as a hard off followed by on.
    if (chosen === undefined) return offThenOn([]);
    const observed = await observedRestart(ctx, action, chosen);
    return observed ? { ...result, after: 'On', resetTypes: [chosen], observed } : offThenOn([chosen]);
  }
  if (chosen !== undefined) {
    await reset(ctx, action, chosen, plan.target);
    return { ...result, after: plan.target, resetTypes: [chosen] };
  }
  throw new RedfishError(
    'REDFISH_UNSUPPORTED',
    `BMC allows none of ${candidates.join(', ')} for "${powerAction}" from ${before} (allowed: ${allowed.join(', ')})`,
  );
}
