import { describe, expect, it } from 'vitest';
import type { TenantEvent } from '../../schemas/vps/events.ts';
import { reservationOf, reservationsOf, type TenantState } from '../../schemas/vps/tenantState.ts';
import { tenantAggregate, usageOf } from '../../services/vps/tenant/tenant.ts';

const small = { instances: 1, vcpus: 1, memoryMib: 1_024, diskGib: 20 };
const created: TenantEvent = { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } };
const requested = (instanceId: string): TenantEvent => ({
  type: 'InstanceRequested',
  data: {
    tenantId: 't1',
    instanceId,
    poolId: 'p1',
    flavorId: 'small',
    image: 'ubuntu-24.04',
    sshKeys: [],
    userData: null,
    resources: small,
    requestedAt: '2026-12-07T12:00:00.000Z',
  },
});
const used = (instanceId: string): TenantEvent => ({ type: 'QuotaUsed', data: { tenantId: 't1', instanceId } });
const released = (instanceId: string): TenantEvent => ({ type: 'QuotaReleased', data: { tenantId: 't1', instanceId } });
const fold = (state: TenantState, events: readonly TenantEvent[]) => events.reduce((s, e) => tenantAggregate.evolve(s, e), state);
/** What a state says of each instance id, as plain data: compared before and after later events are folded onto it. */
const reading = (state: TenantState, ids: readonly string[]) => ({ usage: usageOf(state), each: ids.map((id) => reservationOf(state, id)?.status ?? null) });

describe('the tenant fold over its instance map', () => {
  it('leaves every earlier state as it was: the aggregate cache and an OCC retry fold again from one', () => {
    const ids = ['vm-1', 'vm-2', 'constructor'];
    const before = fold(tenantAggregate.initialState, [created, requested('vm-1'), requested('vm-2')]);
    const seen = reading(before, ids);
    // Two appends decided from the same base (an OCC retry re-deciding, or the cache's state read twice).
    const oneWay = fold(before, [used('vm-1'), requested('constructor')]);
    const otherWay = fold(before, [released('vm-2')]);
    expect(reading(before, ids)).toEqual(seen);
    expect(reading(oneWay, ids).each).toEqual(['used', 'reserved', 'reserved']);
    expect(reading(otherWay, ids).each).toEqual(['reserved', 'released', null]);
    expect(usageOf(otherWay).reserved.instances).toBe(1);
  });

  it('folds a tenant with thousands of instances to the same reservations and usage as a recount, from any earlier state', () => {
    const n = 3_000;
    const ids = Array.from({ length: n }, (_, i) => `vm-${i}`);
    const events: TenantEvent[] = [created, ...ids.map(requested)];
    for (let i = 0; i < n; i += 3) events.push(used(ids[i]!));
    for (let i = 0; i < n; i += 5) events.push(released(ids[i]!));
    const whole = fold(tenantAggregate.initialState, events);
    // Rebuilt in two halves, the second from the first's state, after another branch was folded from that state too.
    const half = fold(tenantAggregate.initialState, events.slice(0, n));
    fold(half, [released(ids[1]!), requested('vm-other')]);
    const incremental = fold(half, events.slice(n));
    expect(reading(incremental, ids)).toEqual(reading(whole, ids));
    expect(reservationOf(incremental, 'vm-other')).toBeUndefined();

    const statuses = ids.map((_, i) => (i % 5 === 0 ? 'released' : i % 3 === 0 ? 'used' : 'reserved'));
    expect(reading(whole, ids).each).toEqual(statuses);
    const count = (status: string) => statuses.filter((s) => s === status).length;
    expect(usageOf(whole).used).toEqual({ instances: count('used'), vcpus: count('used'), memoryMib: 1_024 * count('used'), diskGib: 20 * count('used') });
    expect(usageOf(whole).reserved.instances).toBe(count('reserved'));
    expect([...reservationsOf(whole)].length).toBe(n);
  });
});
