import type { ClientContext } from './context.ts';
import { RedfishError } from './errors.ts';
import { str } from './json.ts';
import { allowableValues, findAction, type ActionRef } from './links.ts';
import { pollUntil } from './poll.ts';

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
}

// Used when the BMC declares no allowable values at all (DSP0268 lists these for ComputerSystem.Reset).
const standardResetTypes = [
  'On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn', 'PushPowerButton', 'PowerCycle',
];

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
  const state = await pollUntil(() => getPowerState(ctx), (s) => s === 'On' || s === 'Off', {
    intervalMs: ctx.timing.pollIntervalMs,
    timeoutMs: ctx.timing.powerTimeoutMs,
    what,
  });
  return state === 'On' ? 'On' : 'Off';
}

async function resetAction(ctx: ClientContext): Promise<{ action: ActionRef; allowed: string[] }> {
  const action = findAction((await ctx.discovery.system()).body, '#ComputerSystem.Reset');
  if (!action) throw new RedfishError('REDFISH_UNSUPPORTED', 'ComputerSystem has no #ComputerSystem.Reset action');
  return { action, allowed: (await allowableValues(ctx.http, action, 'ResetType')) ?? standardResetTypes };
}

async function reset(ctx: ClientContext, action: ActionRef, resetType: string, target: 'On' | 'Off'): Promise<void> {
  await ctx.http.send('POST', action.target, { ResetType: resetType });
  await pollUntil(() => getPowerState(ctx), (s) => s === target, {
    intervalMs: ctx.timing.pollIntervalMs,
    timeoutMs: ctx.timing.powerTimeoutMs,
    what: `PowerState to become ${target} after ${resetType}`,
  });
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
  if (chosen !== undefined) {
    await reset(ctx, action, chosen, plan.target);
    return { ...result, after: plan.target, resetTypes: [chosen] };
  }
  // No restart type at all: a cycle is still possible as a hard off followed by on.
  const on = plans.on.fromOff.find((type) => allowed.includes(type));
  if (powerAction === 'cycle' && allowed.includes('ForceOff') && on !== undefined) {
    await reset(ctx, action, 'ForceOff', 'Off');
    await reset(ctx, action, on, 'On');
    return { ...result, after: 'On', resetTypes: ['ForceOff', on] };
  }
  throw new RedfishError(
    'REDFISH_UNSUPPORTED',
    `BMC allows none of ${candidates.join(', ')} for "${powerAction}" from ${before} (allowed: ${allowed.join(', ')})`,
  );
}
