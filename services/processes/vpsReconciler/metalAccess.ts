import { randomUUID } from 'node:crypto';
import { listNodes } from '../../../projections/nodes/queries.ts';
import type { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { AgentCommand, newNonce } from '../../../schemas/agent/agentCommand.ts';
import type { InstanceSpec } from '../../../schemas/agent/hostInstances.ts';
import type { AgentPresenceLookup } from '../../../schemas/agent/agentPresence.ts';
import { idFor } from '../../../schemas/ids.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import type { HoldCandidate } from '../../../schemas/vps/holdCommands.ts';
import type { Effect } from '../../platform/processManager/processManager.ts';
import { placementCandidateOf } from '../../vps/placement/candidates.ts';
import { observe, releaseQuota, type ConvergeTask } from './effects.ts';
import type { ReconciledInstance, VpsModel } from './model.ts';

const PAGE = 500;
const NOTHING = { vcpus: 0, memoryMib: 0, diskGib: 0 };
/** An agent command to a host outlives its resend period; past it the host does not start it (a newer one follows). */
const HOST_COMMAND_VALID_MS = 10 * 60_000;

/** What the metal steps need of the world: the nodes read model, the heartbeats heard, and the agents' command stream. */
export interface MetalAccess {
  readonly nodes: ReadModelReader | undefined;
  readonly presence: AgentPresenceLookup;
  sendAgentCommand(command: AgentCommand): Promise<void>;
}

/**
 * The site's nodes as placement sees them: effective labels (drivers as this process heard them advertised), capacity
 * from the inventory, schedulable when deployed, in service and its agent heard by this process. What instances take
 * is not read here: the site's book counts its own.
 */
export function candidatesAt(access: MetalAccess, siteId: string): HoldCandidate[] {
  if (!access.nodes) return [];
  const views: NodeView[] = [];
  let cursor: string | undefined;
  do {
    const page = listNodes(access.nodes.db(), { siteId, limit: PAGE, ...(cursor ? { cursor } : {}) }, access.presence);
    views.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return views.map((view) => placementCandidateOf(view, NOTHING));
}

/**
 * `vps.placeInstance` for the instance, with the site's nodes now. No node fits: asked again on the next passes, until
 * `waitMs` after the first ask (the nodes read model may be behind, a host not heard yet since this process started,
 * capacity about to be freed). Refused past that, or for anything else (the pool names no runtime): the instance is in
 * `error` with the refusal, and its quota goes back (nothing was created anywhere).
 */
export function placeEffects(
  instance: ReconciledInstance,
  model: VpsModel,
  access: MetalAccess,
  waitMs: number,
  now = Date.now(),
): readonly Effect<ConvergeTask>[] {
  const waiting = now - (instance.host?.placeAskedAt ?? now) < waitMs;
  const pool = model.metalPoolOf(instance);
  if (!pool) return [];
  const payload = { siteId: pool.siteId, tenantId: instance.tenantId, instanceId: instance.instanceId, candidates: candidatesAt(access, pool.siteId) };
  return [
    {
      kind: 'command',
      name: 'vps.placeInstance',
      payload,
      commandId: `place-${randomUUID()}`,
      ifRefused: (refusal) =>
        refusal.code === 'NO_CAPACITY' && waiting
          ? []
          : [observe(instance, 'error', { message: `${refusal.code}: ${refusal.message}`.slice(0, 2_000) }), releaseQuota(instance)],
    },
  ];
}

/**
 * `vps.relocateInstance` for an instance whose node is lost, with the site's nodes now (the lost one is never taken,
 * whatever the read model says of it). No node fits: the request stands, and the next resync pass asks again (the
 * instance is not at rest while it waits); its quota is untouched. Meanwhile it is recorded `provisioning` with no
 * address and the refusal as its message: its node no longer serves it, so what that node last said of it (`running`,
 * its addresses) is no longer true, and the tenant sees why it is not running elsewhere yet. The same refusal recorded
 * again appends nothing (`vps.recordInstanceObserved`).
 */
export function relocateEffects(instance: ReconciledInstance, model: VpsModel, access: MetalAccess): readonly Effect<ConvergeTask>[] {
  const pool = model.metalPoolOf(instance);
  if (!pool || !instance.relocation) return [];
  const { fromNodeId } = instance.relocation;
  const waiting = (refusal: { code: string; message: string }) =>
    observe(instance, 'provisioning', {
      addresses: [],
      message: `${refusal.code}: no node takes it off ${fromNodeId} yet: ${refusal.message}`.slice(0, 2_000),
    });
  const payload = { siteId: pool.siteId, tenantId: instance.tenantId, instanceId: instance.instanceId, candidates: candidatesAt(access, pool.siteId) };
  return [
    {
      kind: 'command',
      name: 'vps.relocateInstance',
      payload,
      commandId: `relocate-${randomUUID()}`,
      ifRefused: (r) => (r.code === 'NO_CAPACITY' ? [waiting(r)] : undefined),
    },
  ];
}

/**
 * The `instance.apply` spec of the instance: the pool's runtime, the flavor, the image, the desired state, its SSH keys
 * (what the tenant gave `vps.createInstance`), its user data.
 */
function specOf(instance: ReconciledInstance, runtime: string): InstanceSpec {
  const { flavorId, image, sshKeys, userData, resources } = instance.spec;
  return {
    id: instance.instanceId,
    runtime,
    flavor: { name: flavorId, vcpus: resources.vcpus, memoryMiB: resources.memoryMib, diskGiB: resources.diskGib },
    image: { ref: image },
    desiredState: instance.desired === 'stopped' ? 'stopped' : 'running',
    ...(sshKeys.length > 0 ? { sshKeys: [...sshKeys] } : {}),
    // The host passes it on the first apply only, and keeps it only until that apply is answered.
    ...(userData !== null ? { userData } : {}),
    // Placed warm: the host renames the slot to this instance, and this apply is its first start, user data included.
    ...(instance.fromSlot !== undefined ? { fromSlot: instance.fromSlot } : {}),
  };
}

/**
 * Sends the instance's host its agent command (as the rollout controller sends `module.apply`): `instance.apply` with
 * the desired state, or `instance.remove`, on that node's own command subject, valid for ten minutes. A fresh id each
 * time: a resend must reach a host whose journal already ran the previous one. The host's answer is read from its
 * verified heartbeats, not from the result.
 */
export async function sendToHost(
  instance: ReconciledInstance,
  model: VpsModel,
  kind: 'apply' | 'remove',
  access: MetalAccess,
  now = Date.now(),
  /** A node other than its own: one it was moved off, whose copy goes (`instance.remove` only). */
  onNode?: string,
): Promise<void> {
  const placement = onNode !== undefined ? { siteId: model.metalPoolOf(instance)?.siteId ?? '', nodeId: onNode } : instance.placement;
  const pool = model.metalPoolOf(instance);
  if (!placement || !pool?.runtime || (onNode !== undefined && kind !== 'remove')) return;
  if (kind === 'apply' && instance.desired === 'deleted') return;
  const params = kind === 'apply' ? specOf(instance, pool.runtime) : { id: instance.instanceId };
  await sendHostCommand(access, placement, kind, params, instance.key, `instance-${instance.instanceId}`, now);
}

/**
 * Sends a host its `instance.apply` or `instance.remove` on that node's own command subject, valid for ten minutes.
 * A fresh id each time: a resend must reach a host whose journal already ran the previous one.
 */
export async function sendHostCommand(
  access: MetalAccess,
  on: { readonly siteId: string; readonly nodeId: string },
  kind: 'apply' | 'remove',
  params: unknown,
  key: string,
  workflowId: string,
  now = Date.now(),
): Promise<void> {
  const command = AgentCommand.parse({
    commandId: `${idFor(`instance-${kind}`, key)}-${randomUUID().slice(0, 8)}`,
    kind: kind === 'apply' ? 'instance.apply' : 'instance.remove',
    siteId: on.siteId,
    nodeId: on.nodeId,
    workflowId,
    stepIndex: 0,
    attempt: 1,
    destructive: false,
    params,
    issuedAt: new Date(now).toISOString(),
    notAfter: new Date(now + HOST_COMMAND_VALID_MS).toISOString(),
    nonce: newNonce(),
  });
  await access.sendAgentCommand(command);
}
