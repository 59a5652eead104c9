import { isDeepStrictEqual } from 'node:util';
import { CreatePool } from '../../../schemas/vps/poolCommands.ts';
import type { PoolEvent } from '../../../schemas/vps/events.ts';
import { hardwareProfileCatalog, refuseAgentlessInBcdPool, requireHardwareProfile } from '../../../schemas/metal/hardwareProfileCatalog.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryRef } from '../../../schemas/plugins/registryState.ts';
import { siteRef } from '../../../schemas/site/siteState.ts';
import { accountRef } from '../../../schemas/vps/accountState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { deploymentHardwareProfiles } from '../../platform/deploymentHardwareProfiles.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { poolAggregate } from './pool.ts';

/**
 * `vps.createPool`: the account (provider pool) or site (metal pool) it draws on must exist, and the hardware profile its
 * policy selects must be declared and able to run the pool's agent, so the mistake shows here rather than at every
 * enrolment into the pool.
 */
export const createPool = defineCommand({
  name: 'vps.createPool',
  exposure: ['operator'],
  schema: CreatePool,
  aggregate: poolAggregate,
  aggregateId: (command) => command.poolId,
  dependencies: async (command, load) => ({
    accountExists: command.accountId === undefined ? true : (await load(accountRef, command.accountId)).exists,
    siteExists: command.siteId === undefined ? true : (await load(siteRef, command.siteId)).exists,
    hardwareProfiles:
      command.policy?.hardwareProfile === undefined
        ? []
        : hardwareProfileCatalog(deploymentHardwareProfiles(), await load(pluginRegistryRef, PLUGIN_REGISTRY_ID)),
  }),
  decide(command, state, { dependencies }): PoolEvent[] {
    const data = {
      poolId: command.poolId,
      class: command.class,
      agent: command.agent,
      accountId: command.accountId ?? null,
      siteId: command.siteId ?? null,
      policy: {
        allowUnverifiedRelease: command.policy?.allowUnverifiedRelease ?? false,
        provisioningCidrs: command.policy?.provisioningCidrs ?? [],
        ...(command.policy?.wipeMethod ? { wipeMethod: command.policy.wipeMethod } : {}),
        ...(command.policy?.hardwareProfile ? { hardwareProfile: command.policy.hardwareProfile } : {}),
      },
      ...(command.runtime !== undefined ? { runtime: command.runtime } : {}),
    };
    if (state.exists) {
      const { offeredTo: _offeredTo, exists: _exists, ...created } = state;
      if (isDeepStrictEqual(created, data)) return [];
      throw new DomainError('ALREADY_EXISTS', `pool ${command.poolId} already exists`);
    }
    if (!dependencies.accountExists) throw new DomainError('PRECONDITION_FAILED', `provider account ${command.accountId} does not exist`);
    if (!dependencies.siteExists) throw new DomainError('PRECONDITION_FAILED', `site ${command.siteId} does not exist`);
    if (command.policy?.hardwareProfile !== undefined)
      refuseAgentlessInBcdPool(command.poolId, command.agent, requireHardwareProfile(dependencies.hardwareProfiles, command.policy.hardwareProfile));
    return [{ type: 'PoolCreated', data }];
  },
});
