import { aggregateRef } from '../aggregateRef.ts';
import type { PluginRegistration } from './registration.ts';

/** The one registry instance: every registration goes through it, so two plugins cannot claim one id at once. */
export const PLUGIN_REGISTRY_ID = 'catalog';

export interface RegisteredPlugin extends PluginRegistration {
  readonly registeredAt: string;
}

export interface PluginRegistryState {
  /** The latest registration of each plugin. */
  readonly plugins: ReadonlyMap<string, RegisteredPlugin>;
}

/**
 * What other modules read of the plugin registry (`bc.evt.plugins.registry.catalog`): autonomy's operator commands
 * check categories and owners against the ones plugins declared.
 */
export const pluginRegistryRef = aggregateRef<PluginRegistryState>('plugins', 'registry');
