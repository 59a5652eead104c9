import type { Finding } from '../../../schemas/doctor.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import type { PluginView } from '../../../schemas/plugins/views.ts';
import type { PoolView } from '../../../schemas/vps/views.ts';
import type { Config } from '../../../services/platform/config.ts';
import { configuredHardwareProfiles, hardwareProfileCatalog } from '../../../schemas/metal/hardwareProfileCatalog.ts';
import { finding } from './finding.ts';

/**
 * Pools and nodes naming a hardware profile that is not built in, in the config or registered by a plugin. A pool's is
 * an error (every enrolment into it is refused); a node's a warning: it enrolled before the profile went away (or before
 * profiles were checked) and runs with the drivers its enrolment recorded, but cannot be enrolled again as it is.
 */
export function checkHardwareProfiles(
  config: Config,
  fleet: { pools: readonly PoolView[]; nodes: readonly NodeView[]; plugins: readonly PluginView[] },
): Finding[] {
  const registry = { plugins: new Map(fleet.plugins.map((p) => [p.pluginId, p])) };
  const known = new Set(hardwareProfileCatalog(configuredHardwareProfiles(config.hardwareProfiles), registry).map((p) => p.id));
  const findings: Finding[] = [];
  for (const pool of fleet.pools) {
    const named = pool.policy.hardwareProfile;
    if (named !== undefined && !known.has(named))
      findings.push(
        finding(
          'hardwareProfiles',
          'HARDWARE_PROFILE_UNKNOWN',
          'error',
          `pool ${pool.poolId} selects hardware profile ${named}, which nobody declares: enrolments into it are refused`,
          {
            poolId: pool.poolId,
            hardwareProfile: named,
          },
        ),
      );
  }
  const unknownNodes = new Map<string, string[]>();
  for (const node of fleet.nodes)
    if (!known.has(node.hardwareProfile)) unknownNodes.set(node.hardwareProfile, [...(unknownNodes.get(node.hardwareProfile) ?? []), node.nodeId]);
  for (const [profile, nodes] of unknownNodes)
    findings.push(
      finding(
        'hardwareProfiles',
        'HARDWARE_PROFILE_UNKNOWN',
        'warning',
        `${nodes.length} node(s) name hardware profile ${profile}, which nobody declares (${nodes.slice(0, 10).join(', ')}): they keep the drivers they enrolled with`,
        { hardwareProfile: profile, nodes },
      ),
    );
  if (findings.length === 0)
    findings.push(
      finding('hardwareProfiles', 'HARDWARE_PROFILES_OK', 'info', `every pool and node names a declared hardware profile (${known.size} declared)`),
    );
  return findings;
}
