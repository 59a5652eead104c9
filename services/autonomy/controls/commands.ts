import { CONTROLS_ID } from '../../../schemas/autonomy/ids.ts';
import { HaltAutonomy, PauseOwner, SetPolicy } from '../../../schemas/autonomy/controlCommands.ts';
import type { ControlEvent } from '../../../schemas/autonomy/controlEvents.ts';
import { defineCommand, type AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryRef } from '../../../schemas/plugins/registryState.ts';
import { declaredPolicies } from '../policies.ts';
import { controlsAggregate } from './controls.ts';

// The declared set is the built-in lanes' and every registered plugin's: a plugin's categories and owners are steered
// like built-in ones. The registry is read as this process last saw it; a refusal is decided again on a fresh read.
const declaredIn = async (load: AggregateLoader) => declaredPolicies(await load(pluginRegistryRef, PLUGIN_REGISTRY_ID));

/**
 * `autonomy.setPolicy` (operators): a category's disposition; null returns it to the declared one. A category neither
 * built in nor declared by a registered plugin is refused (`NOT_PERMITTED`), except to clear an override it still has.
 */
export const setPolicy = defineCommand({
  name: 'autonomy.setPolicy',
  exposure: ['operator'],
  schema: SetPolicy,
  aggregate: controlsAggregate,
  aggregateId: () => CONTROLS_ID,
  dependencies: (_command, load) => declaredIn(load),
  decide(command, state, { dependencies: declared }): ControlEvent[] {
    const clearing = command.disposition === null && command.category in state.overrides;
    if (!clearing && !declared.some((p) => p.declaration.category === command.category))
      throw new DomainError('NOT_PERMITTED', `category ${command.category} is not declared`);
    if ((state.overrides[command.category] ?? null) === command.disposition) return [];
    return [{ type: 'PolicyDispositionSet', data: { category: command.category, disposition: command.disposition } }];
  },
});

/**
 * `autonomy.pause` (operators): no new remediation of this owner's categories (built in or a plugin's) starts while
 * paused. An owner of no declared category is refused (`NOT_PERMITTED`), except to resume one still paused.
 */
export const pauseOwner = defineCommand({
  name: 'autonomy.pause',
  exposure: ['operator'],
  schema: PauseOwner,
  aggregate: controlsAggregate,
  aggregateId: () => CONTROLS_ID,
  dependencies: (_command, load) => declaredIn(load),
  decide(command, state, { dependencies: declared }): ControlEvent[] {
    const resuming = !command.paused && state.paused.includes(command.owner);
    if (!resuming && !declared.some((p) => p.declaration.owner === command.owner))
      throw new DomainError('NOT_PERMITTED', `no category is owned by ${command.owner}`);
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
