import { CONTROLS_ID } from '../../../schemas/autonomy/ids.ts';
import { HaltAutonomy, PauseOwner, SetPolicy } from '../../../schemas/autonomy/controlCommands.ts';
import type { ControlEvent } from '../../../schemas/autonomy/controlEvents.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../platform/errors.ts';
import { builtinPolicies } from '../policies.ts';
import { controlsAggregate } from './controls.ts';

const declared = new Set(builtinPolicies.map((p) => p.category));
const owners = new Set(builtinPolicies.map((p) => p.owner));

/** `autonomy.setPolicy` (operators): a category's disposition; null returns it to the declared one. */
export const setPolicy = defineCommand({
  name: 'autonomy.setPolicy',
  exposure: ['operator'],
  schema: SetPolicy,
  aggregate: controlsAggregate,
  aggregateId: () => CONTROLS_ID,
  decide(command, state): ControlEvent[] {
    if (!declared.has(command.category)) throw new DomainError('NOT_PERMITTED', `category ${command.category} is not declared`);
    if ((state.overrides[command.category] ?? null) === command.disposition) return [];
    return [{ type: 'PolicyDispositionSet', data: { category: command.category, disposition: command.disposition } }];
  },
});

/** `autonomy.pause` (operators): no new remediation of this owner's categories starts while paused. */
export const pauseOwner = defineCommand({
  name: 'autonomy.pause',
  exposure: ['operator'],
  schema: PauseOwner,
  aggregate: controlsAggregate,
  aggregateId: () => CONTROLS_ID,
  decide(command, state): ControlEvent[] {
    if (!owners.has(command.owner)) throw new DomainError('NOT_PERMITTED', `no category is owned by ${command.owner}`);
    if (state.paused.includes(command.owner) === command.paused) return [];
    return [{ type: 'OwnerPauseSet', data: { owner: command.owner, paused: command.paused, reason: command.reason ?? null } }];
  },
});

/** `autonomy.halt` (operators): the kill switch. */
export const haltAutonomy = defineCommand({
  name: 'autonomy.halt',
  exposure: ['operator'],
  schema: HaltAutonomy,
  aggregate: controlsAggregate,
  aggregateId: () => CONTROLS_ID,
  decide(command, state): ControlEvent[] {
    if (state.halted === command.halted) return [];
    return [{ type: 'AutonomyHaltSet', data: { halted: command.halted, reason: command.reason ?? null } }];
  },
});
