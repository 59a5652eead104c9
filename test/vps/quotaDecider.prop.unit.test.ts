import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { CreateInstance, resourceDimensions } from '../../schemas/vps/tenantCommands.ts';
import type { PoolEvent, TenantEvent } from '../../schemas/vps/events.ts';
import { flavorAggregate } from '../../services/vps/flavor/flavor.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { poolAggregate } from '../../services/vps/pool/pool.ts';
import { createInstance } from '../../services/vps/tenant/createInstance.ts';
import { releaseQuota } from '../../services/vps/tenant/releaseQuota.ts';
import { reservationOf, reservationsOf, type TenantState } from '../../schemas/vps/tenantState.ts';
import { tenantAggregate, usageOf } from '../../services/vps/tenant/tenant.ts';
import { flavors, instancePayload } from './vpsPayloads.ts';

const flavorIds = Object.keys(flavors) as (keyof typeof flavors)[];
const pool: PoolEvent[] = [
  {
    type: 'PoolCreated',
    data: { poolId: 'metal-a', class: 'metal', agent: 'bcd', accountId: null, siteId: 'dc1', policy: { allowUnverifiedRelease: false, provisioningCidrs: [] } },
  },
  { type: 'PoolOffered', data: { poolId: 'metal-a', tenantId: 't1' } },
];
const poolState = pool.reduce((s, e) => poolAggregate.evolve(s, e), poolAggregate.initialState);
const flavorState = (flavorId: keyof typeof flavors) =>
  flavorAggregate.evolve(flavorAggregate.evolve(flavorAggregate.initialState, { type: 'FlavorCreated', data: { flavorId, ...flavors[flavorId] } }), {
    type: 'FlavorMapped',
    data: { flavorId, poolId: 'metal-a', offerId: flavorId },
  });

const actionArb = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), id: fc.nat(7), flavor: fc.constantFrom(...flavorIds) }),
  fc.record({ kind: fc.constantFrom('use' as const, 'release' as const), id: fc.nat(7) }),
);
const quotaArb = fc.record({ instances: fc.nat(6), vcpus: fc.nat(12), memoryMib: fc.nat(24_576), diskGib: fc.nat(300) });

/** The usage counted afresh from every reservation the tenant holds, to check the totals the fold keeps. */
function recount(state: TenantState) {
  const usage = { used: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 }, reserved: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 } };
  if (!state.exists) return usage;
  for (const r of reservationsOf(state)) {
    if (r.status === 'released') continue;
    for (const d of resourceDimensions) usage[r.status][d] += r.resources[d];
  }
  return usage;
}

/** Runs an action the way the bus would: refusals append nothing. */
function step(state: TenantState, action: { kind: string; id: number; flavor?: keyof typeof flavors }): TenantState {
  const context = { commandId: 'cmd-00000001', actor: 'test', now: '2026-12-02T12:00:00.000Z' };
  const ids = { tenantId: 't1', instanceId: `vm-${action.id}` };
  let events: readonly TenantEvent[] = [];
  try {
    if (action.kind === 'create') {
      const flavorId = action.flavor!;
      const dependencies = { pool: poolState, flavor: flavorState(flavorId), instance: instanceAggregate.initialState };
      events = createInstance.decide(CreateInstance.parse(instancePayload('t1', ids.instanceId, flavorId)), state, { ...context, dependencies });
    } else if (action.kind === 'release') {
      events = releaseQuota.decide(ids, state, { ...context, dependencies: undefined });
    } else if (reservationOf(state, ids.instanceId)?.status === 'reserved') {
      // A `QuotaUsed` as logs written before the read model took "used" from the first running observation hold it.
      events = [{ type: 'QuotaUsed', data: ids }];
    }
  } catch (err) {
    expect(['QUOTA_EXCEEDED', 'ALREADY_EXISTS', 'NOT_FOUND']).toContain((err as { code: string }).code);
  }
  return events.reduce(tenantAggregate.evolve, state);
}

describe('tenant quota decider', () => {
  test.prop([quotaArb, fc.array(actionArb, { maxLength: 40 })], { numRuns: 300 })(
    'any sequence of creates, uses and releases keeps usage within the quota and equal to a recount of the reservations, and releasing everything returns it to zero',
    (quota, actions) => {
      let state = tenantAggregate.evolve(
        tenantAggregate.evolve(tenantAggregate.initialState, { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } }),
        {
          type: 'TenantQuotaSet',
          data: { tenantId: 't1', ...quota },
        },
      );
      for (const action of actions) {
        state = step(state, action);
        const { used, reserved } = usageOf(state);
        expect({ used, reserved }).toEqual(recount(state));
        for (const d of resourceDimensions) expect(used[d] + reserved[d]).toBeLessThanOrEqual(quota[d]);
      }
      for (let id = 0; id < 8; id++) state = step(state, { kind: 'release', id });
      expect(usageOf(state)).toEqual({
        used: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 },
        reserved: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 },
      });
    },
  );
});
