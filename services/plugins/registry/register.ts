import { isDeepStrictEqual } from 'node:util';
import { PluginRegistration } from '../../../schemas/plugins/registration.ts';
import type { PluginEvent } from '../../../schemas/plugins/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { builtinPolicies } from '../../autonomy/policies.ts';
import { builtinHardwareProfiles } from '../../../schemas/metal/hardwareProfile.ts';
import { builtinProfileCatalog } from '../../metal/profiles/builtin.ts';
import { builtinSteps } from '../builtinSteps.ts';
import { PLUGIN_REGISTRY_ID, ownerOf, pluginRegistryAggregate } from './registry.ts';

const builtinProfileIds = new Set(builtinProfileCatalog.map((p) => p.id));
const builtinIds: Record<'steps' | 'profiles' | 'policies' | 'hardwareProfiles', { has(id: string): boolean }> = {
  steps: builtinSteps,
  profiles: builtinProfileIds,
  policies: new Set(builtinPolicies.map((p) => p.category)),
  hardwareProfiles: new Set(builtinHardwareProfiles.map((p) => p.id)),
};
const noun = { steps: 'step id', profiles: 'profile id', policies: 'category', hardwareProfiles: 'hardware profile' } as const;

/**
 * `plugins.register`: a plugin process announces what it brings. A step or profile id, or an intervention category,
 * that is built in or belongs to another plugin is refused (`ALREADY_EXISTS`): work for a step id must have exactly
 * one home, and a category exactly one declaration (one owner, one default disposition). The same registration again
 * (a restart, a second replica) appends nothing.
 */
export const registerPlugin = defineCommand({
  name: 'plugins.register',
  exposure: ['engine'],
  schema: PluginRegistration,
  aggregate: pluginRegistryAggregate,
  aggregateId: () => PLUGIN_REGISTRY_ID,
  decide(command, state, { now }): PluginEvent[] {
    const previous = state.plugins.get(command.pluginId);
    if (previous) {
      const { registeredAt: _, ...registered } = previous;
      if (isDeepStrictEqual(registered, command)) return [];
    }
    for (const kind of ['steps', 'profiles', 'policies', 'hardwareProfiles'] as const) {
      const ids = kind === 'policies' ? command.policies.map((p) => p.category) : (command[kind] ?? []).map((item) => item.id);
      const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
      if (duplicate) throw new DomainError('VALIDATION_FAILED', `plugin ${command.pluginId} lists ${kind} "${duplicate}" twice`);
      for (const id of ids) {
        if (builtinIds[kind].has(id)) throw new DomainError('ALREADY_EXISTS', `${noun[kind]} "${id}" is built in; plugin ${command.pluginId} must use another`);
        const owner = ownerOf(state, kind, id);
        if (owner && owner !== command.pluginId) throw new DomainError('ALREADY_EXISTS', `${noun[kind]} "${id}" is registered by plugin ${owner}`);
      }
    }
    return [{ type: 'PluginRegistered', data: { ...command, registeredAt: now } }];
  },
});
