import { CreateJoinToken, CreateSiteToken } from '../../../schemas/trust/joinTokens.ts';
import type { JoinTokenEvent } from '../../../schemas/trust/events.ts';
import { nodeRef, type NodeAggregateState } from '../../../schemas/metal/nodeState.ts';
import { siteRef, type SiteState } from '../../../schemas/site/siteState.ts';
import { defineCommand, type AggregateLoader, type CommandContext } from '../../platform/commands/commandDefinition.ts';
import { joinAttestors } from '../../../schemas/trust/joinAttestors.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { joinTokenAggregate, type JoinTokenState } from './joinToken.ts';

const defaultTtlSeconds = 3600;

type Scope = { role: CreateJoinToken['role']; siteId: string; nodeId: string | null };

function decideCreate(
  command: Pick<CreateJoinToken, 'tokenId' | 'hash' | 'expiresAt' | 'ttlSeconds' | 'expect' | 'attestor'> & Scope,
  state: JoinTokenState,
  context: CommandContext,
  target: Target,
): JoinTokenEvent[] {
  if (state.exists) {
    // The same token sent again (a retried mint) changes nothing; another secret under a taken id is a collision.
    if (state.hash === command.hash && state.role === command.role && state.siteId === command.siteId) return [];
    throw new DomainError('ALREADY_EXISTS', `join token ${command.tokenId} exists`);
  }
  const attestor = joinAttestors[command.attestor ?? 'issued'];
  const unmintable = attestor.refusesToMint(command.expect ?? null);
  if (unmintable) throw new DomainError('JOIN_EXPECTATION_REQUIRED', unmintable);
  if (!target.site.exists) throw new DomainError('PRECONDITION_FAILED', `site ${command.siteId} does not exist`);
  if (command.nodeId !== null && (!target.node?.exists || target.node.siteId !== command.siteId)) {
    throw new DomainError('PRECONDITION_FAILED', `node ${command.nodeId} is not enrolled at site ${command.siteId}`);
  }
  const now = Date.parse(context.now);
  const expiresAt = command.expiresAt ?? new Date(now + (command.ttlSeconds ?? defaultTtlSeconds) * 1000).toISOString();
  if (Date.parse(expiresAt) <= now) throw new DomainError('VALIDATION_FAILED', 'expiresAt is in the past');
  const { tokenId, hash, role, siteId, nodeId } = command;
  return [
    {
      type: 'JoinTokenCreated',
      data: { tokenId, hash, role, siteId, nodeId, expiresAt: new Date(expiresAt).toISOString(), expect: command.expect ?? null, attestor: attestor.name },
    },
  ];
}

type Target = { site: SiteState; node: NodeAggregateState | null };

async function loadTarget(siteId: string, nodeId: string | undefined, load: AggregateLoader): Promise<Target> {
  const [site, node] = await Promise.all([load(siteRef, siteId), nodeId ? load(nodeRef, nodeId) : Promise.resolve(null)]);
  return { site, node };
}

/** `pki.createJoinToken`: records a minted token (hash only) for a ramdisk, node or site agent of an existing site/node. */
export const createJoinToken = defineCommand({
  name: 'pki.createJoinToken',
  exposure: ['join'],
  schema: CreateJoinToken,
  aggregate: joinTokenAggregate,
  aggregateId: (command) => command.tokenId,
  dependencies: (command, load) => loadTarget(command.siteId, command.nodeId, load),
  decide: (command, state, context) => decideCreate({ ...command, nodeId: command.nodeId ?? null }, state, context, context.dependencies),
});

/** `siteTokens.create`: a join token for the agent of one site. */
export const createSiteToken = defineCommand({
  name: 'siteTokens.create',
  exposure: ['join'],
  schema: CreateSiteToken,
  aggregate: joinTokenAggregate,
  aggregateId: (command) => command.tokenId,
  dependencies: (command, load) => loadTarget(command.siteId, undefined, load),
  decide: (command, state, context) => decideCreate({ ...command, role: 'site', nodeId: null, expect: undefined }, state, context, context.dependencies),
});
