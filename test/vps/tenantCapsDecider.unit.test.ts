import { describe, expect, it } from 'vitest';
import type { TenantEvent } from '../../schemas/vps/events.ts';
import { SetTenantCaps } from '../../schemas/vps/tenantCommands.ts';
import { operatorCommands } from '../../services/api/commandCatalog.ts';
import { setTenantCaps } from '../../services/vps/tenant/setCaps.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { thrownCode } from '../support/thrownCode.ts';

const ctx = { commandId: 'cmd-00000001', actor: 'test', now: '2026-12-06T12:00:00.000Z', dependencies: undefined };
const fold = (events: readonly TenantEvent[]) => events.reduce((s, e) => tenantAggregate.evolve(s, e), tenantAggregate.initialState);
const created: TenantEvent = { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } };

describe('vps.setTenantCaps', () => {
  it('sets a tenant’s caps, appends nothing when they are already set, and refuses an unknown tenant', () => {
    const command = SetTenantCaps.parse({ tenantId: 't1', deploys: 2 });
    expect(command).toEqual({ tenantId: 't1', deploys: 2, wipes: null });
    const events = setTenantCaps.decide(command, fold([created]), ctx);
    expect(events).toEqual([{ type: 'TenantCapsSet', data: { tenantId: 't1', deploys: 2, wipes: null } }]);
    const state = fold([created, ...events]);
    expect(state.exists && state.caps).toEqual({ deploys: 2, wipes: null });
    expect(setTenantCaps.decide(command, state, ctx)).toEqual([]);
    // Back to the defaults is a change too.
    expect(setTenantCaps.decide(SetTenantCaps.parse({ tenantId: 't1' }), state, ctx)).toEqual([
      { type: 'TenantCapsSet', data: { tenantId: 't1', deploys: null, wipes: null } },
    ]);
    expect(setTenantCaps.decide(SetTenantCaps.parse({ tenantId: 't1' }), fold([created]), ctx)).toEqual([]);
    expect(thrownCode(() => setTenantCaps.decide(command, tenantAggregate.initialState, ctx))).toBe('NOT_FOUND');
  });

  it('refuses a cap of zero (a tenant that may never deploy is a quota, not a cap) and is an operator command', () => {
    expect(SetTenantCaps.safeParse({ tenantId: 't1', deploys: 0 }).success).toBe(false);
    expect(operatorCommands.some((c) => c.name === 'vps.setTenantCaps')).toBe(true);
  });
});
