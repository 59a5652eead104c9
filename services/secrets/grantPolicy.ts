import type { SecretGrantRequest } from '../../schemas/secrets/grant.ts';
import { PlatformError } from '../platform/errors.ts';
import type { NodeAggregateState } from '../metal/node/node.ts';
import type { AgentState } from '../trust/agent/agent.ts';
import type { SecretState } from './secret/secret.ts';

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
