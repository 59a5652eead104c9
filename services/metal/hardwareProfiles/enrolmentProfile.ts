import { DEFAULT_HARDWARE_PROFILE, type HardwareDrivers } from '../../../schemas/metal/hardwareProfile.ts';
import type { PoolState } from '../../../schemas/vps/poolState.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { refuseAgentlessInBcdPool, requireHardwareProfile, type CatalogedHardwareProfile } from '../../../schemas/metal/hardwareProfileCatalog.ts';

/** The profile an enrolment records, and whether the node ever runs `bcd` (what `NodeEnrolled.agent` says). */
export interface EnrolmentProfile {
  readonly id: string;
  readonly drivers: HardwareDrivers;
  readonly agent: 'none' | 'bcd' | undefined;
}

/**
 * Which hardware profile a node enrols with: the one the command names, else its pool's `policy.hardwareProfile`, else
 * the built-in default. Refused when no one declares it (`HARDWARE_PROFILE_UNKNOWN`), when the pool selects another, or
 * when the pool runs `bcd` on machines whose profile cannot run it (`HARDWARE_PROFILE_MISMATCH`). The node runs no agent
 * when its profile deploys agentless or its pool runs none: a machine that can stream an image can also be driven
 * without one, never the reverse.
 */
export function enrolmentProfile(named: string | undefined, pool: PoolState | undefined, catalog: readonly CatalogedHardwareProfile[]): EnrolmentProfile {
  const selected = pool?.exists ? pool.policy.hardwareProfile : undefined;
  if (named !== undefined && selected !== undefined && named !== selected)
    throw new DomainError('HARDWARE_PROFILE_MISMATCH', `pool ${pool?.exists ? pool.poolId : ''} takes hardware profile ${selected}, not ${named}`);
  const id = named ?? selected ?? DEFAULT_HARDWARE_PROFILE;
  const profile = requireHardwareProfile(catalog, id);
  if (pool?.exists) refuseAgentlessInBcdPool(pool.poolId, pool.agent, profile);
  if (profile.drivers.deploy === 'agentless') return { id, drivers: profile.drivers, agent: 'none' };
  const agent = pool?.exists ? pool.agent : undefined;
  return { id, drivers: agent === 'none' ? { ...profile.drivers, deploy: 'agentless' } : profile.drivers, agent };
}
