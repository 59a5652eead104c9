import { builtinHardwareProfiles, type HardwareProfile, type HardwareProfileSource } from '../../../schemas/metal/hardwareProfile.ts';
import type { PluginRegistryState } from '../../../schemas/plugins/registryState.ts';
import { loadConfig } from '../../platform/config.ts';

/** A declared hardware profile and who declared it. */
export interface CatalogedHardwareProfile extends HardwareProfile {
  readonly source: HardwareProfileSource;
}

/** The profiles of a deployment config (`hardwareProfiles`), named. */
export const configuredHardwareProfiles = (declared: Readonly<Record<string, Omit<HardwareProfile, 'id'>>>): HardwareProfile[] =>
  Object.entries(declared).map(([id, profile]) => ({ id, ...profile }));

/**
 * Every profile an enrolment may name: the built-in ones, the deployment config's, then each registered plugin's. Ids
 * are unique across them: the config loader refuses a built-in name and `plugins.register` refuses a taken one, so
 * the first match is the only one (a config profile a plugin later also declares is the config's).
 */
export function hardwareProfileCatalog(configured: readonly HardwareProfile[], registry: PluginRegistryState | undefined): CatalogedHardwareProfile[] {
  return [
    ...builtinHardwareProfiles.map((p) => ({ ...p, source: 'builtin' as const })),
    ...configured.map((p) => ({ ...p, source: 'config' as const })),
    ...[...(registry?.plugins.values() ?? [])].flatMap((plugin) =>
      (plugin.hardwareProfiles ?? []).map((p) => ({ ...p, source: `plugin:${plugin.pluginId}` as const })),
    ),
  ];
}

export const findHardwareProfile = (catalog: readonly CatalogedHardwareProfile[], id: string): CatalogedHardwareProfile | undefined =>
  catalog.find((p) => p.id === id);

let deploymentProfiles: readonly HardwareProfile[] | undefined;

/**
 * The profiles this process's deployment config declares, read once: every process of a stack reads the same config
 * at start, so each one that decides an enrolment knows the same set (a changed config takes effect as they restart).
 */
export function deploymentHardwareProfiles(): readonly HardwareProfile[] {
  deploymentProfiles ??= configuredHardwareProfiles(loadConfig().hardwareProfiles);
  return deploymentProfiles;
}
