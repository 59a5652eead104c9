import type { NodeAggregateState } from '../../schemas/metal/nodeState.ts';
import type { SecretGrantRequest } from '../../schemas/secrets/grant.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { SecretState } from './secret/secret.ts';
import type { SecretTicketClaims } from './secretTicket.ts';

/**
 * Whether a (registered, signature-checked) agent may have a secret. Today only site agents get secrets, only `bmc`
 * ones, and only the one a node enrolled at their own site names as its BMC credentials: a site agent cannot reach
 * another site's BMCs, or any provider token, by asking. Throws GRANT_NOT_AUTHORISED or NOT_FOUND.
 */
export function authoriseGrant(
  request: SecretGrantRequest,
  agent: Extract<AgentState, { exists: true }>,
  node: NodeAggregateState,
  secret: SecretState,
): Extract<SecretState, { exists: true }> {
  if (agent.role !== 'site') throw new PlatformError('GRANT_NOT_AUTHORISED', `${agent.role} agents are not granted secrets`);
  if (!node.exists || node.siteId !== agent.siteId) {
    throw new PlatformError('GRANT_NOT_AUTHORISED', `node ${request.nodeId} is not enrolled at site ${agent.siteId}`);
  }
  if (node.bmc.credentialsRef !== request.ref) {
    throw new PlatformError('GRANT_NOT_AUTHORISED', `node ${request.nodeId} does not use ${request.ref} for its BMC`);
  }
  if (!secret.exists) throw new PlatformError('NOT_FOUND', `${request.ref} does not exist`);
  if (secret.kind !== 'bmc') throw new PlatformError('GRANT_NOT_AUTHORISED', `${request.ref} is a ${secret.kind} secret, not BMC credentials`);
  return secret;
}

/**
 * A secret a command names (a `site.httpProxy` secret header), asked for with the executor's ticket from that command:
 * the ticket must be this control plane's, unexpired, for this node and this ref; the agent must be the site agent of
 * the node's site; and the secret must be a `generic` one (BMC credentials and provider tokens never go into headers).
 */
export function authoriseTicketGrant(
  request: SecretGrantRequest,
  claims: SecretTicketClaims | undefined,
  nowMs: number,
  agent: Extract<AgentState, { exists: true }>,
  node: NodeAggregateState,
  secret: SecretState,
): Extract<SecretState, { exists: true }> {
  if (!claims) throw new PlatformError('GRANT_NOT_AUTHORISED', 'the ticket was not issued by this control plane');
  if (Date.parse(claims.notAfter) <= nowMs) throw new PlatformError('GRANT_NOT_AUTHORISED', `the ticket of ${claims.commandId} expired`);
  if (claims.nodeId !== request.nodeId || !claims.refs.includes(request.ref)) {
    throw new PlatformError('GRANT_NOT_AUTHORISED', `the ticket of ${claims.commandId} does not name ${request.ref} for ${request.nodeId}`);
  }
  if (agent.role !== 'site' || !node.exists || node.siteId !== agent.siteId) {
    throw new PlatformError('GRANT_NOT_AUTHORISED', `${request.agentId} is not the site agent of node ${request.nodeId}`);
  }
  if (!secret.exists) throw new PlatformError('NOT_FOUND', `${request.ref} does not exist`);
  if (secret.kind !== 'generic')
    throw new PlatformError('GRANT_NOT_AUTHORISED', `${request.ref} is a ${secret.kind} secret; only generic secrets go into headers`);
  return secret;
}
