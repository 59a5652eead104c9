import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { pluginEvents, type PluginEvent } from '../../../schemas/plugins/events.ts';
import { PLUGIN_REGISTRY_ID, type PluginRegistryState, type RegisteredPlugin } from '../../../schemas/plugins/registryState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export { PLUGIN_REGISTRY_ID, type PluginRegistryState, type RegisteredPlugin };

/** Which plugin owns a step id, a profile id or an intervention category, if any. */
export function ownerOf(state: PluginRegistryState, kind: 'steps' | 'profiles' | 'policies' | 'hardwareProfiles', id: string): string | undefined {
  for (const plugin of state.plugins.values()) {
    const ids = kind === 'policies' ? plugin.policies.map((p) => p.category) : (plugin[kind] ?? []).map((item) => item.id);
    if (ids.includes(id)) return plugin.pluginId;
  }
  return undefined;
}

/** The plugin registry (`bc.evt.plugins.registry.catalog`): the steps, profiles, drivers, providers and intervention categories plugins announced. */
export const pluginRegistryAggregate = defineAggregate<PluginRegistryState, PluginEvent>({
  module: 'plugins',
  type: 'registry',
  initialState: { plugins: new Map() },
  catalog: new EventCatalog(pluginEvents),
  evolve(state, event) {
    const plugins = new Map(state.plugins);
    plugins.set(event.data.pluginId, event.data);
    return { plugins };
  },
});
