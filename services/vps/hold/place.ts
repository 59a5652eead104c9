import { isDeepStrictEqual } from 'node:util';
import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { PlaceHold, type HoldHolder } from '../../../schemas/vps/holdCommands.ts';
import type { Exclusion } from '../../../schemas/vps/placement.ts';
import { poolRef, type PoolState } from '../../../schemas/vps/poolState.ts';
import { tenantRef, type TenantState } from '../../../schemas/vps/tenantState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { bookSnapshotAt } from '../placement/bookSnapshot.ts';
import { decideHold } from '../placement/holdPlacement.ts';
import { holdBookAggregate } from './holdBook.ts';

const reasonOf = (e: Exclusion): string => (e.why === 'INSUFFICIENT_CAPACITY' ? `INSUFFICIENT_CAPACITY (short of ${e.short.join(', ')})` : e.why);

/** Refuses a holder that does not exist, or a pool elsewhere or without agents (the Talos pool: nothing is ever placed there). */
function checkHolder(holder: HoldHolder, siteId: string, deps: { tenant: TenantState | undefined; pool: PoolState | undefined }): void {
  if ('tenantId' in holder) {
    if (!deps.tenant?.exists) throw new DomainError('PRECONDITION_FAILED', `tenant ${holder.tenantId} does not exist`);
    return;
  }
  const pool = deps.pool;
  if (!pool?.exists || pool.class !== 'metal' || pool.siteId !== siteId) {
    throw new DomainError('PRECONDITION_FAILED', `pool ${holder.poolId} is not a metal pool at site ${siteId}`);
  }
  if (pool.agent === 'none') throw new DomainError('AGENTLESS_NOT_HOLDABLE', `pool ${holder.poolId} is agentless: its nodes are never held`);
}

/**
 * `vps.placeHold`: keeps capacity on `nodes` nodes of the site for the holder until it expires, decided by the pure
 * hold placement (`decideHold`) on the nodes the command carries and the site's holds still active at the command's
 * time. The nodes come from the API's snapshot of the nodes read model; the holds from this aggregate, so concurrent
 * holds see each other. All or nothing; the refusal lists why each node could not be held. The same hold again is a
 * no-op, another under the same id ALREADY_EXISTS.
 */
export const placeHold = defineCommand({
  name: 'vps.placeHold',
  exposure: ['edge'],
  schema: PlaceHold,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  dependencies: async (command, load) => ({
    tenant: 'tenantId' in command.holder ? await load(tenantRef, command.holder.tenantId) : undefined,
    pool: 'poolId' in command.holder ? await load(poolRef, command.holder.poolId) : undefined,
  }),
  decide(command, state, { dependencies, now }): HoldBookEvent[] {
    const { siteId, holdId, holder, nodes, resources, selector, durationSeconds } = command;
    const existing = state.holds[holdId];
    if (existing) {
      const same = isDeepStrictEqual(
        { holder, nodes, wholeNodes: resources === undefined, selector, durationSeconds },
        {
          holder: existing.holder,
          nodes: existing.nodes.length,
          wholeNodes: existing.wholeNodes,
          selector: existing.selector,
          durationSeconds: existing.durationSeconds,
        },
      );
      if (same && (resources === undefined || existing.nodes.every((n) => isDeepStrictEqual(n.resources, resources)))) return [];
      throw new DomainError('ALREADY_EXISTS', `hold ${holdId} already exists with another request`);
    }
    checkHolder(holder, siteId, dependencies);
    const nowMs = Date.parse(now);
    const expiresAtMs = nowMs + durationSeconds * 1_000;
    // What instances take of each node is the book's, not the sender's: holds never stand on placed instances.
    const snapshot = bookSnapshotAt(state, command.candidates, nowMs);
    const decision = decideHold({ holdId, holder, nodes, resources, selector, expiresAtMs }, snapshot);
    if (!decision.placed) {
      const issues = decision.excluded.map((e) => ({ path: e.nodeId, message: reasonOf(e) }));
      const others = decision.excluded.filter((e) => e.why !== 'SELECTOR_MISMATCH');
      if (decision.found === 0 && others.length > 0 && others.every((e) => e.why === 'AGENTLESS')) {
        throw new DomainError('AGENTLESS_NOT_HOLDABLE', `every node at site ${siteId} matching the selector is agentless: none is ever held`, { issues });
      }
      const message = `no capacity: ${decision.found} of ${nodes} node(s) at site ${siteId} could be held${issues.length ? `; ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` : ''}`;
      throw new DomainError('NO_CAPACITY', message, { issues });
    }
    return [
      {
        type: 'HoldPlaced',
        data: {
          siteId,
          holdId,
          holder,
          nodes: decision.nodes.map((n) => ({ nodeId: n.nodeId, resources: n.resources, freeBefore: n.freeBefore })),
          wholeNodes: resources === undefined,
          selector,
          durationSeconds,
          considered: decision.considered,
          placedAt: now,
          expiresAt: new Date(expiresAtMs).toISOString(),
        },
      },
    ];
  },
});
