import type { MetalEvent } from '../../../schemas/metal/events.ts';
import { createHash } from 'node:crypto';
import { EnrollNode } from '../../../schemas/metal/nodeCommands.ts';
import { describeIdentity, identityKey, nodeIdentityRef, type NodeIdentity } from '../../../schemas/metal/nodeIdentity.ts';
import { nodeRef } from '../../../schemas/metal/nodeState.ts';
import { PLUGIN_REGISTRY_ID, pluginRegistryRef } from '../../../schemas/plugins/registryState.ts';
import { siteRef } from '../../../schemas/site/siteState.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { defineCommand, type AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { hardwareProfileCatalog } from '../../../schemas/metal/hardwareProfileCatalog.ts';
import { deploymentHardwareProfiles } from '../../platform/deploymentHardwareProfiles.ts';
import { enrolmentProfile } from '../hardwareProfiles/enrolmentProfile.ts';
import { otherHolder } from '../identity/nodeIdentity.ts';
import { nodeAggregate } from './node.ts';

/** A node id derived from the command id, so a retried enroll without an explicit id names the same node. */
const derivedNodeId = (commandId: string) => `n-${createHash('sha256').update(commandId).digest('hex').slice(0, 16)}`;

/** Who holds the machine's BMC system (`metal.claimIdentity` records it once the orchestrator sees the enrolment). */
async function identityClaim(identity: NodeIdentity, load: AggregateLoader) {
  const claim = await load(nodeIdentityRef, identityKey(identity));
  return { identity, claim, holder: claim.claimedBy === null ? undefined : await load(nodeRef, claim.claimedBy) };
}

export const enrollNode = defineCommand({
  name: 'metal.enroll',
  exposure: ['operator'],
  schema: EnrollNode,
  aggregate: nodeAggregate,
  aggregateId: (command, context) => command.nodeId ?? derivedNodeId(context.commandId),
  dependencies: async (command, load) => ({
    site: await load(siteRef, command.siteId),
    pool: command.poolId === undefined ? undefined : await load(poolRef, command.poolId),
    ...(await identityClaim({ kind: 'bmcSystem', address: command.bmc.address }, load)),
    // What the enrolment may name: built in, this deployment's config, and what plugins registered.
    hardwareProfiles: hardwareProfileCatalog(deploymentHardwareProfiles(), await load(pluginRegistryRef, PLUGIN_REGISTRY_ID)),
  }),
  decide(command, state, { commandId, dependencies }): MetalEvent[] {
    const nodeId = command.nodeId ?? derivedNodeId(commandId);
    if (state.exists) throw new DomainError('ALREADY_EXISTS', `node ${nodeId} is already enrolled`);
    if (!dependencies.site.exists) throw new DomainError('PRECONDITION_FAILED', `site ${command.siteId} does not exist`);
    const other = otherHolder(dependencies.claim, dependencies.holder, nodeId);
    if (other !== undefined) throw new DomainError('NODE_IDENTITY_CONFLICT', `node ${other} already has the ${describeIdentity(dependencies.identity)}`);
    const { pool } = dependencies;
    if (pool !== undefined) {
      if (!pool.exists) throw new DomainError('PRECONDITION_FAILED', `pool ${command.poolId} does not exist`);
      if (pool.class !== 'metal') throw new DomainError('PRECONDITION_FAILED', `pool ${pool.poolId} is a ${pool.class} pool, not a metal pool`);
      if (pool.siteId !== command.siteId) throw new DomainError('PRECONDITION_FAILED', `pool ${pool.poolId} is at site ${pool.siteId}, not ${command.siteId}`);
      if (command.inspectInBand && pool.agent === 'none')
        throw new DomainError('UNSUPPORTED', `pool ${pool.poolId} is agentless; an in-band inspection needs the bcd ramdisk`);
    }
    const profile = enrolmentProfile(command.hardwareProfile, pool, dependencies.hardwareProfiles);
    if (command.inspectInBand && profile.agent === 'none')
      throw new DomainError('UNSUPPORTED', `hardware profile ${profile.id} deploys agentless; an in-band inspection needs the bcd ramdisk`);
    return [
      {
        type: 'NodeEnrolled',
        data: {
          nodeId,
          siteId: command.siteId,
          bmc: command.bmc,
          hardwareProfile: profile.id,
          macs: command.macs,
          ...(command.addresses.length > 0 ? { addresses: command.addresses } : {}),
          ...(pool?.exists ? { poolId: pool.poolId } : {}),
          ...(profile.agent !== undefined ? { agent: profile.agent } : {}),
          ...(command.inspectInBand ? { inspectInBand: true as const } : {}),
        },
      },
    ];
  },
});
