import { configuredHardwareProfiles } from '../../schemas/metal/hardwareProfileCatalog.ts';
import type { HardwareProfile } from '../../schemas/metal/hardwareProfile.ts';
import { loadConfig } from './config.ts';

let deploymentProfiles: readonly HardwareProfile[] | undefined;

/**
 * The profiles this process's deployment config declares, read once: every process of a stack reads the same config
 * at start, so each one that decides an enrolment or a pool knows the same set (a changed config takes effect as they
 * restart).
 */
export function deploymentHardwareProfiles(): readonly HardwareProfile[] {
  deploymentProfiles ??= configuredHardwareProfiles(loadConfig().hardwareProfiles);
  return deploymentProfiles;
}
