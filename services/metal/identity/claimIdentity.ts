import { ClaimNodeIdentity, describeIdentity, identityKey, nodeIdentityRef, type NodeIdentityEvent } from '../../../schemas/metal/nodeIdentity.ts';
import { nodeRef } from '../../../schemas/metal/nodeState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { nodeIdentityAggregate, otherHolder } from './nodeIdentity.ts';

/**
 * `metal.claimIdentity`: the orchestrator's claim of a node's BMC system (at enrolment) or system UUID (when
 * inspection read it). Decided on the identity's own aggregate, so of two nodes claiming one machine concurrently
 * exactly one wins; the other is refused with `NODE_IDENTITY_CONFLICT` and never becomes ready.
 */
export const claimIdentity = defineCommand({
  name: 'metal.claimIdentity',
  exposure: ['engine'],
  schema: ClaimNodeIdentity,
  aggregate: nodeIdentityAggregate,
  aggregateId: (command) => identityKey(command.identity),
  dependencies: async (command, load) => {
    // The holder is read fresh: a retirement another process recorded frees the identity.
    const claim = await load(nodeIdentityRef, identityKey(command.identity), { fresh: true });
    return { holder: claim.claimedBy === null ? undefined : await load(nodeRef, claim.claimedBy, { fresh: true }) };
  },
  decide(command, state, { dependencies }): NodeIdentityEvent[] {
    const other = otherHolder(state, dependencies.holder, command.nodeId);
    if (other !== undefined) throw new DomainError('NODE_IDENTITY_CONFLICT', `node ${other} already has the ${describeIdentity(command.identity)}`);
    if (state.claimedBy === command.nodeId) return [];
    return [
      { type: 'NodeIdentityClaimed', data: { key: identityKey(command.identity), nodeId: command.nodeId, identity: describeIdentity(command.identity) } },
    ];
  },
});
