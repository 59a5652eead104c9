import { sameJoinHash, UNIDENTIFIED_JOIN, UseJoinToken, type JoinRefusal } from '../../../schemas/trust/joinTokens.ts';
import type { JoinTokenEvent } from '../../../schemas/trust/events.ts';
import { nodeRef, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { joinAttestors } from '../../../schemas/trust/joinAttestors.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { joinTokenAggregate, type JoinTokenState } from './joinToken.ts';

/**
 * Why this join must be refused, or undefined when it may go ahead. The hash is checked before anything that would
 * tell a prober about the token (used, expired, its scope), so knowing an id alone reveals nothing.
 */
export function refusalOf(command: UseJoinToken, state: JoinTokenState, now: string, node: NodeAggregateState | null): JoinRefusal | undefined {
  if (command.tokenId === undefined || command.presentedHash === undefined) return 'JOIN_TOKEN_MALFORMED';
  if (!state.exists) return 'JOIN_TOKEN_UNKNOWN';
  if (!sameJoinHash(state.hash, command.presentedHash)) return 'JOIN_TOKEN_INVALID';
  if (state.usedBy !== null) return 'JOIN_TOKEN_USED';
  if (Date.parse(state.expiresAt) <= Date.parse(now)) return 'JOIN_TOKEN_EXPIRED';
  if (state.role !== command.role) return 'JOIN_ROLE_MISMATCH';
  if (state.siteId !== command.siteId || state.nodeId !== (command.nodeId ?? null)) return 'JOIN_SCOPE_MISMATCH';
  return joinAttestors[state.attestor].refusalOf(state.expect, {
    presentedProductUuid: command.productUuid,
    inventoriedProductUuid: node?.exists ? (node.inventory?.productUuid?.toLowerCase() ?? undefined) : undefined,
  });
}

/**
 * `pki.useJoinToken` (join service only): appends `JoinTokenUsed`, or `JoinRefused` with the reason (the audit of a
 * refused join is on the token's own subject, `unidentified` for text that names no token). Either way the command
 * succeeds; the join service answers the joiner from the event. A refusal the join service counts instead
 * (`recordRefusal: false`) throws its code and appends nothing. Concurrent uses of one token race on the append's
 * expected sequence, so at most one `JoinTokenUsed` is ever written.
 */
export const useJoinToken = defineCommand({
  name: 'pki.useJoinToken',
  exposure: ['join'],
  schema: UseJoinToken,
  aggregate: joinTokenAggregate,
  aggregateId: (command) => command.tokenId ?? UNIDENTIFIED_JOIN,
  dependencies: async (command, load) => (command.nodeId ? load(nodeRef, command.nodeId) : null),
  decide(command, state, context): JoinTokenEvent[] {
    const reason = refusalOf(command, state, context.now, context.dependencies);
    if (reason === undefined)
      return [{ type: 'JoinTokenUsed', data: { tokenId: command.tokenId!, agentId: command.agentId, ...(command.keyId ? { keyId: command.keyId } : {}) } }];
    if (!command.recordRefusal) throw new DomainError(reason, `join refused: ${reason}`);
    const { role, siteId, agentId } = command;
    return [{ type: 'JoinRefused', data: { tokenId: command.tokenId ?? null, reason, role, siteId, nodeId: command.nodeId ?? null, agentId } }];
  },
});
