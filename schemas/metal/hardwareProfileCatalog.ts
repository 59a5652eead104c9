import { DomainError } from '../platformError.ts';
import { builtinHardwareProfiles, type HardwareProfile, type HardwareProfileSource } from './hardwareProfile.ts';

/** A declared hardware profile and who declared it. */
export interface CatalogedHardwareProfile extends HardwareProfile {
  readonly source: HardwareProfileSource;
}

/**
 * What the catalog reads of the plugin registry (`PluginRegistryState` has this shape): named here rather than imported,
 * because the registry's contract already imports the profile shapes.
 */
export interface PluginsDeclaringProfiles {
  readonly plugins: ReadonlyMap<string, { readonly pluginId: string; readonly hardwareProfiles?: readonly HardwareProfile[] }>;
}

/** The profiles of a deployment config (`hardwareProfiles`), named. */
export const configuredHardwareProfiles = (declared: Readonly<Record<string, Omit<HardwareProfile, 'id'>>>): HardwareProfile[] =>
  Object.entries(declared).map(([id, profile]) => ({ id, ...profile }));

/**
 * Every profile an enrolment or a metal pool may name: the built-in ones, the deployment config's, then each registered
 * plugin's. Ids are unique across them: the config loader refuses a built-in name and `plugins.register` refuses a
 * taken one, so the first match is the only one (a config profile a plugin later also declares is the config's). In the
 * contract because two modules decide over it (metal's enrolment, vps's pool creation).
 */
export function hardwareProfileCatalog(configured: readonly HardwareProfile[], registry: PluginsDeclaringProfiles | undefined): CatalogedHardwareProfile[] {
  return [
    ...builtinHardwareProfiles.map((p) => ({ ...p, source: 'builtin' as const })),
    ...configured.map((p) => ({ ...p, source: 'config' as const })),
    ...[...(registry?.plugins.values() ?? [])].flatMap((plugin) =>
      (plugin.hardwareProfiles ?? []).map((p) => ({ ...p, source: `plugin:${plugin.pluginId}` as const })),
    ),
  ];
}

/** The profile of that name, or `HARDWARE_PROFILE_UNKNOWN` naming the ones there are. */
export function requireHardwareProfile(catalog: readonly CatalogedHardwareProfile[], id: string): CatalogedHardwareProfile {
  const profile = catalog.find((p) => p.id === id);
  if (profile) return profile;
  throw new DomainError(
    'HARDWARE_PROFILE_UNKNOWN',
    `no hardware profile ${id}: declare it in the config (hardwareProfiles) or a plugin, or name one of ${catalog.map((p) => p.id).join(', ')}`,
  );
}

/** A pool that runs `bcd` cannot take machines whose profile deploys agentless: they never boot it. */
export function refuseAgentlessInBcdPool(poolId: string, agent: 'none' | 'bcd', profile: HardwareProfile): void {
  if (profile.drivers.deploy === 'agentless' && agent === 'bcd')
    throw new DomainError('HARDWARE_PROFILE_MISMATCH', `pool ${poolId} runs bcd; hardware profile ${profile.id} deploys agentless and never boots it`);
}
