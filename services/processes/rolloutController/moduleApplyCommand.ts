import { AgentCommand, newNonce } from '../../../schemas/agent/agentCommand.ts';
import { PUBLISHERS_ID, trustedPublisherKeys } from '../../../schemas/fleet/publishers.ts';
import type { BlobStore } from '../../blobs/blobStore.ts';
import { moduleAggregate } from '../../fleet/module/module.ts';
import { publishersAggregate } from '../../fleet/publishers/publishers.ts';
import { nodeAggregate } from '../../metal/node/node.ts';
import type { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import type { PlanApplyTask } from './planApplyReactions.ts';
import type { ModuleApplyTask } from './rolloutReactions.ts';

/** How long a bundle's grant stays valid past its command's `notAfter`: a host that took the command still fetches it. */
export const GRANT_OUTLIVES_COMMAND_MS = 15 * 60_000;

/** Where a `module.apply` is built from: the log (the version, the trusted keys, the host's site) and the blob store. */
export interface ModuleApplySources {
  readonly repository: AggregateRepository;
  readonly blobs: () => Promise<BlobStore>;
  /** How long a host takes to probe one module's probe. */
  readonly probeTimeoutMs: number;
}

/**
 * The agent command of a `module.apply` task (a rollout's, or a plan's `plan.apply`): the published version's bundle (through a capability URL granted to the
 * host alone) and manifest digest, the keys of its publisher trusted now (a revoked publisher's bundle is applied
 * nowhere), on the host's own command subject. `commandId` is the task's: a repeat is dropped by the command stream
 * within its duplicate window and by the agent's journal after it, and the bundle's grant is the command id's. Valid until `notAfter`: a host that comes back
 * after the wave's deadline does not switch unasked (the wave already counted it timed out).
 *
 * Refuses with NOT_FOUND or PRECONDITION_FAILED what no retry would change: an unknown host or version, no trusted key.
 */
export async function moduleApplyCommand(
  sources: ModuleApplySources,
  task: ModuleApplyTask | PlanApplyTask,
  notAfterMs: number,
  now = Date.now(),
): Promise<AgentCommand> {
  const { repository } = sources;
  const [module, publishers, node] = await Promise.all([
    repository.load(moduleAggregate, task.module),
    repository.load(publishersAggregate, PUBLISHERS_ID),
    repository.load(nodeAggregate, task.host),
  ]);
  const published = module.state.versions.find((v) => v.version === task.version);
  if (published === undefined) throw new PlatformError('NOT_FOUND', `${task.module} ${task.version} is not published`);
  if (!node.state.exists) throw new PlatformError('NOT_FOUND', `host ${task.host} is not enrolled`);
  const keys = trustedPublisherKeys(publishers.state).filter((k) => k.publisherId === published.publisherId);
  if (keys.length === 0)
    throw new PlatformError('PRECONDITION_FAILED', `publisher ${published.publisherId} of ${task.module} ${task.version} is not trusted now`);
  // One grant per command id, so a resend reuses it; it outlives the command by the time a fetch may take, then expires.
  const terms = { key: task.commandId, expiresAtMs: notAfterMs + GRANT_OUTLIVES_COMMAND_MS };
  const grant = await (await sources.blobs()).grantContent(task.host, published.bundleSha256, terms, now);
  if (grant === undefined) throw new PlatformError('NOT_FOUND', `the bundle of ${task.module} ${task.version} is not in the blob store`);
  return AgentCommand.parse({
    commandId: task.commandId,
    kind: 'module.apply',
    siteId: node.state.siteId,
    nodeId: task.host,
    // A rollout's apply answers to the rollout, a plan's to its operator's request.
    workflowId: task.type === 'module.apply' ? task.rolloutId : task.requestId,
    stepIndex: 0,
    attempt: 1,
    destructive: false,
    params: {
      module: task.module,
      version: task.version,
      bundleUrl: grant.url,
      bundleSha256: published.bundleSha256,
      manifestSha256: published.manifestSha256,
      trustedPublishers: keys.map(({ publisherId, publicKey }) => ({ publisherId, publicKey })),
      probeTimeoutMs: sources.probeTimeoutMs,
    },
    issuedAt: new Date(now).toISOString(),
    notAfter: new Date(notAfterMs).toISOString(),
    nonce: newNonce(),
  });
}
