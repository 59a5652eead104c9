import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { nodeIdentityEvents, type NodeIdentityEvent, type NodeIdentityState } from '../../../schemas/metal/nodeIdentity.ts';
import type { NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

/** One machine identity (a BMC system or a system UUID) and the node that holds it. */
export const nodeIdentityAggregate = defineAggregate<NodeIdentityState, NodeIdentityEvent>({
  module: 'metal',
  type: 'nodeIdentity',
  initialState: { claimedBy: null },
  catalog: new EventCatalog(nodeIdentityEvents),
  evolve(state, event) {
    return event.type === 'NodeIdentityClaimed' ? { claimedBy: event.data.nodeId } : state;
  },
});

/** The node holding an identity, when another node than `nodeId` holds it and is still in the fleet (not retired). */
export function otherHolder(claim: NodeIdentityState, holder: NodeAggregateState | undefined, nodeId: string): string | undefined {
  if (claim.claimedBy === null || claim.claimedBy === nodeId) return undefined;
  return holder?.exists && holder.state !== 'retired' ? claim.claimedBy : undefined;
}
