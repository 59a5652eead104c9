import { createHash } from 'node:crypto';
import type { ExistingDecision } from '../../autonomy/decision/decision.ts';
import type { AggregateRepository } from '../../platform/commands/aggregateRepository.ts';
import { instanceAggregate } from '../../vps/instance/instance.ts';
import { reservationOf } from '../../../schemas/vps/tenantState.ts';
import { tenantAggregate } from '../../vps/tenant/tenant.ts';

const RECREATED = /-r[0-9a-f]{8}$/;

/**
 * The id (and so the provider client token) of the instance a recreation creates: derived from the decision's
 * episode, so every replica and every retry names the same one, and new for each episode. A recreated instance's
 * own recreation replaces its suffix instead of growing the id.
 */
export function recreatedInstanceId(instanceId: string, decisionId: string, episode: number): string {
  const suffix = createHash('sha256').update(`${instanceId}\n${decisionId}\n${episode}`).digest('hex').slice(0, 8);
  return `${instanceId.replace(RECREATED, '').slice(0, 53)}-r${suffix}`;
}

/**
 * `vps.recreate`: delete the instance (desired `deleted`), then create the same specification under a new id, i.e.
 * a new client token at the provider. Both are the tenant's own verbs, so quota, offers and ownership are decided as
 * for the tenant. Undefined when the instance or its reservation is not known (nothing to recreate).
 */
export async function recreateCommands(
  repository: AggregateRepository,
  decision: ExistingDecision,
): Promise<{ name: string; payload: Record<string, unknown> }[] | undefined> {
  const instanceId = decision.plan.target.id;
  const instance = (await repository.load(instanceAggregate, instanceId)).state;
  if (instance.tenantId === null) return undefined;
  const tenantId = instance.tenantId;
  const spec = reservationOf((await repository.load(tenantAggregate, tenantId)).state, instanceId);
  if (!spec) return undefined;
  const create = {
    tenantId,
    instanceId: recreatedInstanceId(instanceId, decision.decisionId, decision.episode),
    poolId: spec.poolId,
    flavorId: spec.flavorId,
    image: spec.image,
    sshKeys: [...spec.sshKeys],
    ...(spec.userData !== null ? { userData: spec.userData } : {}),
  };
  return [
    { name: 'vps.deleteInstance', payload: { tenantId, instanceId } },
    { name: 'vps.createInstance', payload: create },
  ];
}
