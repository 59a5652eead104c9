import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { nodeRef } from '../../../schemas/metal/nodeState.ts';
import { workflowRef, type WorkflowState } from '../../../schemas/metal/workflowState.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import {
  BOOT_TOKEN_REQUEST_MAX_AGE_MS,
  BootTokenRequest,
  bootTokenRequestSignedBy,
  SignedBootTokenRequest,
  type BootTokenReply,
} from '../../../schemas/trust/bootToken.ts';
import { bootIdOf, type RamdiskBoot } from '../../../schemas/trust/ramdiskBoot.ts';
import { CommandBus } from '../../platform/commands/commandBus.ts';
import { serveRequests } from '../../platform/commands/requestResponder.ts';
import { issuesOf, PlatformError } from '../../../schemas/platformError.ts';
import type { EventStore } from '../../platform/eventStore/eventStore.ts';
import type { Logger } from '../../platform/logger.ts';
import { agentAggregate } from '../agent/agent.ts';
import { createJoinToken } from '../joinToken/create.ts';
import { mintJoinToken } from '../joinToken/mint.ts';
import { contestBoot } from '../ramdiskBoot/contestBoot.ts';
import { recordBootToken } from '../ramdiskBoot/recordBootToken.ts';

/** A boot token lives long enough for a slow PXE boot and ramdisk start, not for a later boot. */
const BOOT_TOKEN_TTL_SECONDS = 600;

/**
 * True while the node's workflow is booting a ramdisk and waiting for it: the step before `wait.agentJoined` (the
 * power cycle that starts the PXE boot) or `wait.agentJoined` itself is the first step not yet succeeded.
 */
export function awaitsRamdiskJoin(workflow: WorkflowState): boolean {
  if (!workflow.exists || workflow.status !== 'running') return false;
  const first = workflow.progress.findIndex((p) => p.status !== 'succeeded');
  if (first < 0) return false;
  return workflow.steps[first]?.id === 'wait.agentJoined' || workflow.steps[first + 1]?.id === 'wait.agentJoined';
}

/** The boot named is the workflow's current one: the attempt now recorded of the power step right before the wait. */
function isCurrentBoot(workflow: WorkflowState, boot: RamdiskBoot): boolean {
  if (!workflow.exists || workflow.workflowId !== boot.workflowId) return false;
  const power = workflow.progress[boot.stepIndex];
  const wait = workflow.progress[boot.stepIndex + 1];
  return workflow.steps[boot.stepIndex + 1]?.id === 'wait.agentJoined' && power?.attempt === boot.attempt && wait?.status !== 'succeeded';
}

function parse(msg: Msg): { signed: SignedBootTokenRequest; request: BootTokenRequest } {
  let signed;
  try {
    signed = SignedBootTokenRequest.safeParse(msg.json());
  } catch (cause) {
    throw new PlatformError('MALFORMED_JSON', 'boot token request is not valid JSON', { cause });
  }
  if (!signed.success) throw new PlatformError('VALIDATION_FAILED', 'invalid boot token request', { issues: issuesOf(signed.error) });
  let inner: unknown;
  try {
    inner = JSON.parse(Buffer.from(signed.data.request, 'base64').toString('utf8'));
  } catch (cause) {
    throw new PlatformError('MALFORMED_JSON', 'signed boot token request does not hold JSON', { cause });
  }
  const request = BootTokenRequest.safeParse(inner);
  if (!request.success) throw new PlatformError('VALIDATION_FAILED', 'invalid boot token request', { issues: issuesOf(request.error) });
  return { signed: signed.data, request: request.data };
}

/**
 * Answers `bc.trust.bootToken` (queue `join`): mints the ramdisk join token for one machine's boot, only for the
 * registered agent of the machine's own site (signed request, fresh), only while a workflow of that machine is booting
 * a ramdisk and waiting for it to join, only for that workflow's current boot, and once per boot (`pki.recordBootToken`
 * binds the token to it; a second ticket or a reported second fetch contests the boot instead). The token travels only in this reply, to the site agent's own
 * inbox, and from there only onto the machine's kernel line; it expects the product UUID Redfish reported, if any.
 */
export function startBootTokenService(nc: NatsConnection, store: EventStore, log: Logger, options: { now?: () => number; bus?: CommandBus } = {}) {
  // A process's own bus when it has one (commands on one aggregate serialised process-wide), else one of its own.
  const bus = options.bus ?? new CommandBus(store, [createJoinToken, recordBootToken, contestBoot], { retries: 5 });
  const repository = bus.repository;
  const now = options.now ?? Date.now;

  const mint = async (msg: Msg): Promise<BootTokenReply> => {
    const { signed, request } = parse(msg);
    // One request per boot: every read is the stream leader's, so no replica behind the log refuses a due boot.
    const agent = (await repository.load(agentAggregate, request.agentId, 'leader')).state;
    if (!agent.exists || agent.role !== 'site') throw new PlatformError('BOOT_TOKEN_UNKNOWN_AGENT', `site agent ${request.agentId} is not registered`);
    if (!bootTokenRequestSignedBy(signed, agent.publicKey))
      throw new PlatformError('BOOT_TOKEN_FORGED', `request is not signed by the registered key of ${request.agentId}`);
    if (Math.abs(now() - Date.parse(request.issuedAt)) > BOOT_TOKEN_REQUEST_MAX_AGE_MS)
      throw new PlatformError('BOOT_TOKEN_STALE', 'boot token request is stale');
    const node = (await repository.load(nodeRef, request.nodeId, 'leader')).state;
    if (!node.exists || node.siteId !== agent.siteId)
      throw new PlatformError('BOOT_TOKEN_NOT_AUTHORISED', `node ${request.nodeId} is not at site ${agent.siteId}`);
    const workflowId = node.current?.workflowId;
    const workflow = workflowId ? (await repository.load(workflowRef, workflowId, 'leader')).state : undefined;
    if (!workflow || !awaitsRamdiskJoin(workflow)) throw new PlatformError('BOOT_TOKEN_NOT_DUE', `no workflow of ${request.nodeId} is waiting for a ramdisk`);
    const { boot } = request;
    if (!isCurrentBoot(workflow, boot)) throw new PlatformError('BOOT_TOKEN_NOT_THIS_BOOT', `${bootIdOf(boot)} is not the current boot of ${request.nodeId}`);
    const bootId = bootIdOf(boot);
    const send = (name: string, payload: unknown, commandId: string) => bus.execute({ name, payload, commandId, actor: `boot:${request.agentId}` });
    const place = { bootId, siteId: node.siteId, nodeId: node.nodeId };
    if (request.refetch) {
      // The site served this boot's script once already: whoever fetches it again is not (only) the machine that was reset.
      const detail = `the boot script of ${node.nodeId} was fetched a second time`;
      await send(contestBoot.name, { ...place, workflowId: boot.workflowId, reason: 'SECOND_FETCH', detail }, `contest-fetch-${bootId}`);
      log.warn({ nodeId: node.nodeId, workflowId, bootId, code: 'BOOT_CONTESTED' }, 'boot contested: its script was fetched twice');
      throw new PlatformError('BOOT_CONTESTED', detail);
    }
    const productUuid = node.inventory?.productUuid ?? undefined;
    const minted = await mintJoinToken(send, {
      role: 'ramdisk',
      siteId: node.siteId,
      nodeId: node.nodeId,
      ttlSeconds: BOOT_TOKEN_TTL_SECONDS,
      ...(productUuid ? { expect: { productUuid } } : {}),
    });
    const recorded = await send(recordBootToken.name, { ...place, boot, tokenId: minted.tokenId }, `boot-token-${minted.tokenId}`);
    if (!recorded.events.some((e) => e.type === 'RamdiskBootTokenIssued')) {
      log.warn({ nodeId: node.nodeId, workflowId, bootId, code: 'BOOT_CONTESTED' }, 'boot contested: a second ticket was presented');
      throw new PlatformError('BOOT_CONTESTED', `boot ${bootId} was already given its token`);
    }
    log.info({ nodeId: node.nodeId, workflowId, bootId, tokenId: minted.tokenId, expiresAt: minted.expiresAt }, 'boot join token minted');
    return { ok: true, token: minted.token, expiresAt: minted.expiresAt };
  };

  const sub = serveRequests(nc, { subject: Subjects.bootJoinToken, queue: 'join', what: 'boot token', logRefusals: true, handle: mint }, log);
  return { stop: async () => sub.unsubscribe() };
}
