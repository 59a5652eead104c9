import { describe, expect, it } from 'vitest';
import { CreateProviderAccount } from '../../schemas/vps/accountCommands.ts';
import { hardwareProfileCatalog } from '../../schemas/metal/hardwareProfileCatalog.ts';
import { CreatePool } from '../../schemas/vps/poolCommands.ts';
import { CreateInstance } from '../../schemas/vps/tenantCommands.ts';
import type { InstanceEvent, PoolEvent, TenantEvent } from '../../schemas/vps/events.ts';
import { engineCommandNames, operatorCommands } from '../../services/api/commandCatalog.ts';
import { tenantCommandNames as tenantCommands } from '../../services/api/commandCatalog.ts';
import { accountAggregate } from '../../services/vps/account/account.ts';
import { createProviderAccount } from '../../services/vps/account/create.ts';
import type { FlavorState } from '../../schemas/vps/flavorState.ts';
import { flavorAggregate } from '../../services/vps/flavor/flavor.ts';
import { deleteInstance, startInstance, stopInstance } from '../../services/vps/instance/desiredState.ts';
import type { InstanceState } from '../../schemas/vps/instanceState.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { recordInstanceObserved } from '../../services/vps/instance/observe.ts';
import { createPool } from '../../services/vps/pool/create.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import { poolAggregate } from '../../services/vps/pool/pool.ts';
import { createTenant, setQuota } from '../../services/vps/tenant/create.ts';
import { createInstance } from '../../services/vps/tenant/createInstance.ts';
import { releaseQuota } from '../../services/vps/tenant/releaseQuota.ts';
import type { TenantState } from '../../schemas/vps/tenantState.ts';
import { tenantAggregate, usageOf } from '../../services/vps/tenant/tenant.ts';
import { thrownCode } from '../support/thrownCode.ts';
import { flavors, instancePayload, quotaOf } from './vpsPayloads.ts';

const NOW = '2026-12-02T12:00:00.000Z';
const ctx = <D>(dependencies: D) => ({ commandId: 'cmd-00000001', actor: 'test', now: NOW, dependencies });
const fold = <S, E>(aggregate: { initialState: S; evolve(s: S, e: E): S }, events: readonly E[]) =>
  events.reduce((s, e) => aggregate.evolve(s, e), aggregate.initialState);

const tenant = (quota = quotaOf(3, 4, 8_192, 100), ...more: TenantEvent[]): TenantState =>
  fold(tenantAggregate, [
    { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } },
    { type: 'TenantQuotaSet', data: { tenantId: 't1', ...quota } },
    ...more,
  ]);
const offeredPool = (...tenants: string[]): PoolState =>
  fold(poolAggregate, [
    {
      type: 'PoolCreated',
      data: {
        poolId: 'metal-a',
        class: 'metal',
        agent: 'bcd',
        accountId: null,
        siteId: 'dc1',
        policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
      },
    },
    ...tenants.map((tenantId): PoolEvent => ({ type: 'PoolOffered', data: { poolId: 'metal-a', tenantId } })),
  ]);
const flavor = (flavorId: keyof typeof flavors, mappedTo = 'metal-a'): FlavorState =>
  fold(flavorAggregate, [
    { type: 'FlavorCreated', data: { flavorId, ...flavors[flavorId] } },
    { type: 'FlavorMapped', data: { flavorId, poolId: mappedTo, offerId: `hw-${flavorId}` } },
  ]);
const noInstance: InstanceState = instanceAggregate.initialState;
const deps = (flavorId: keyof typeof flavors = 'small', overrides: Partial<{ pool: PoolState; flavor: FlavorState; instance: InstanceState }> = {}) =>
  ctx({ pool: offeredPool('t1'), flavor: flavor(flavorId), instance: noInstance, ...overrides });

/** Requests `instanceId` and folds the reservation into `state`. */
function request(state: TenantState, instanceId: string, flavorId: keyof typeof flavors = 'small'): TenantState {
  const events = createInstance.decide(CreateInstance.parse(instancePayload('t1', instanceId, flavorId)), state, deps(flavorId));
  return events.reduce(tenantAggregate.evolve, state);
}
const apply = (state: TenantState, events: readonly TenantEvent[]) => events.reduce(tenantAggregate.evolve, state);

describe('vps.createInstance', () => {
  it('reserves the flavor’s size and one instance in InstanceRequested', () => {
    const events = createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm1', 'medium')), tenant(), deps('medium'));
    expect(events).toEqual([
      {
        type: 'InstanceRequested',
        data: { ...instancePayload('t1', 'vm1', 'medium'), userData: null, resources: { instances: 1, ...flavors.medium }, requestedAt: NOW },
      },
    ]);
    expect(usageOf(apply(tenant(), events)).reserved).toEqual({ instances: 1, ...flavors.medium });
  });

  it('accepts an instance that fills the quota exactly and refuses one unit more, naming the dimension', () => {
    const full = request(request(tenant(quotaOf(3, 4, 8_192, 100)), 'vm1', 'medium'), 'vm2', 'small');
    expect(usageOf(full).reserved.vcpus).toBe(3);
    const filled = request(full, 'vm3', 'small');
    expect(usageOf(filled).reserved).toEqual({ instances: 3, vcpus: 4, memoryMib: 6_144, diskGib: 60 });
    const refused = (() => {
      try {
        createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm4')), filled, deps());
      } catch (err) {
        return err as { code: string; message: string; issues: { path: string }[] };
      }
    })();
    expect(refused?.code).toBe('QUOTA_EXCEEDED');
    expect(refused?.message).toContain('instances: limit 3, in use 3');
    expect(refused?.issues.map((i) => i.path)).toEqual(['instances']);
  });

  it.each([
    ['instances', quotaOf(0, 100, 100_000, 1_000)],
    ['vcpus', quotaOf(10, 1, 100_000, 1_000)],
    ['memoryMib', quotaOf(10, 100, 4_095, 1_000)],
    ['diskGib', quotaOf(10, 100, 100_000, 39)],
  ])('refuses with QUOTA_EXCEEDED on %s when that dimension is short', (dimension, quota) => {
    try {
      createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm1', 'medium')), tenant(quota), deps('medium'));
      expect.unreachable('accepted an instance over quota');
    } catch (err) {
      expect(err).toMatchObject({ code: 'QUOTA_EXCEEDED', issues: [{ path: dimension }] });
    }
  });

  it('counts used (a QuotaUsed of an older log) and reserved alike against the limit, and released not at all', () => {
    let state = request(request(tenant(quotaOf(2, 10, 100_000, 1_000)), 'vm1'), 'vm2');
    state = apply(state, [{ type: 'QuotaUsed', data: { tenantId: 't1', instanceId: 'vm1' } }]);
    expect(usageOf(state)).toEqual({ used: { instances: 1, ...flavors.small }, reserved: { instances: 1, ...flavors.small } });
    expect(thrownCode(() => request(state, 'vm3'))).toBe('QUOTA_EXCEEDED');
    state = apply(state, releaseQuota.decide({ tenantId: 't1', instanceId: 'vm1' }, state, ctx(undefined)));
    expect(usageOf(request(state, 'vm3')).reserved.instances).toBe(2);
  });

  it('refuses an unknown tenant, a pool not offered to the tenant, a flavor the pool does not sell, an id another tenant holds', () => {
    const payload = CreateInstance.parse(instancePayload('t1', 'vm1'));
    expect(thrownCode(() => createInstance.decide(payload, tenantAggregate.initialState, deps()))).toBe('NOT_FOUND');
    expect(thrownCode(() => createInstance.decide(payload, tenant(), deps('small', { pool: offeredPool('t2') })))).toBe('PRECONDITION_FAILED');
    expect(thrownCode(() => createInstance.decide(payload, tenant(), deps('small', { pool: poolAggregate.initialState })))).toBe('PRECONDITION_FAILED');
    expect(thrownCode(() => createInstance.decide(payload, tenant(), deps('small', { flavor: flavor('small', 'other-pool') })))).toBe('PRECONDITION_FAILED');
    expect(thrownCode(() => createInstance.decide(payload, tenant(), deps('small', { flavor: flavorAggregate.initialState })))).toBe('PRECONDITION_FAILED');
    const heldByT2 = fold(instanceAggregate, [
      { type: 'InstanceObserved', data: { instanceId: 'vm1', tenantId: 't2', observed: 'running', providerInstanceId: 'p1', addresses: [], message: null } },
    ]);
    expect(thrownCode(() => createInstance.decide(payload, tenant(), deps('small', { instance: heldByT2 })))).toBe('ALREADY_EXISTS');
  });

  it('is a no-op when repeated identically (even after release), ALREADY_EXISTS when the same id asks for something else', () => {
    const state = request(tenant(), 'vm1');
    expect(createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm1')), state, deps())).toEqual([]);
    expect(thrownCode(() => createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm1', 'medium')), state, deps('medium')))).toBe('ALREADY_EXISTS');
    const released = apply(state, releaseQuota.decide({ tenantId: 't1', instanceId: 'vm1' }, state, ctx(undefined)));
    expect(createInstance.decide(CreateInstance.parse(instancePayload('t1', 'vm1')), released, deps())).toEqual([]);
  });

  it('validates ssh keys (at least one, public keys only) and caps user data', () => {
    expect(CreateInstance.safeParse({ ...instancePayload('t1', 'vm1'), sshKeys: [] }).success).toBe(false);
    expect(CreateInstance.safeParse({ ...instancePayload('t1', 'vm1'), sshKeys: ['-----BEGIN OPENSSH PRIVATE KEY-----'] }).success).toBe(false);
    expect(CreateInstance.safeParse({ ...instancePayload('t1', 'vm1'), userData: 'x'.repeat(32_769) }).success).toBe(false);
    expect(CreateInstance.safeParse({ ...instancePayload('t1', 'vm1'), userData: '#cloud-config\n' }).success).toBe(true);
  });
});

describe('vps.releaseQuota', () => {
  it('gives back exactly what the instance reserved, once', () => {
    const before = request(tenant(quotaOf(5, 10, 100_000, 1_000)), 'vm1', 'small');
    const both = request(before, 'vm2', 'large');
    const released = apply(both, releaseQuota.decide({ tenantId: 't1', instanceId: 'vm2' }, both, ctx(undefined)));
    expect(usageOf(released)).toEqual(usageOf(before));
    expect(releaseQuota.decide({ tenantId: 't1', instanceId: 'vm2' }, released, ctx(undefined))).toEqual([]);
    expect(thrownCode(() => releaseQuota.decide({ tenantId: 't1', instanceId: 'vm9' }, released, ctx(undefined)))).toBe('NOT_FOUND');
  });

  it('gives back a reservation an older log marked used', () => {
    const state = request(tenant(), 'vm1');
    const used = apply(state, [{ type: 'QuotaUsed', data: { tenantId: 't1', instanceId: 'vm1' } }]);
    const released = apply(used, releaseQuota.decide({ tenantId: 't1', instanceId: 'vm1' }, used, ctx(undefined)));
    expect(releaseQuota.decide({ tenantId: 't1', instanceId: 'vm1' }, released, ctx(undefined))).toEqual([]);
    expect(usageOf(released)).toEqual({ used: quotaOf(0, 0, 0, 0), reserved: quotaOf(0, 0, 0, 0) });
  });

  it('treats an instance id such as "constructor" as any other id', () => {
    expect(thrownCode(() => releaseQuota.decide({ tenantId: 't1', instanceId: 'constructor' }, tenant(), ctx(undefined)))).toBe('NOT_FOUND');
    expect(usageOf(request(tenant(), 'constructor')).reserved.instances).toBe(1);
  });
});

describe('vps.createTenant / vps.setQuota', () => {
  it('creates a tenant with zero quota, once', () => {
    const created = createTenant.decide({ tenantId: 't1', name: 'T1' }, tenantAggregate.initialState, ctx(undefined));
    expect(fold(tenantAggregate, created)).toMatchObject({ quota: quotaOf(0, 0, 0, 0) });
    expect(createTenant.decide({ tenantId: 't1', name: 'T1' }, tenant(), ctx(undefined))).toEqual([]);
    expect(thrownCode(() => createTenant.decide({ tenantId: 't1', name: 'Other' }, tenant(), ctx(undefined)))).toBe('ALREADY_EXISTS');
  });

  it('sets limits on an existing tenant, no-op when unchanged', () => {
    expect(thrownCode(() => setQuota.decide({ tenantId: 't1', ...quotaOf(1, 1, 1, 1) }, tenantAggregate.initialState, ctx(undefined)))).toBe('NOT_FOUND');
    expect(setQuota.decide({ tenantId: 't1', ...quotaOf(3, 4, 8_192, 100) }, tenant(), ctx(undefined))).toEqual([]);
    expect(setQuota.decide({ tenantId: 't1', ...quotaOf(1, 1, 1, 1) }, tenant(), ctx(undefined))).toHaveLength(1);
  });
});

describe('instance desired state', () => {
  const owned = request(tenant(), 'vm1');
  const payload = { tenantId: 't1', instanceId: 'vm1' };
  const instance = (...events: InstanceEvent[]) => fold(instanceAggregate, events);
  const desired = (d: 'running' | 'stopped' | 'deleted'): InstanceEvent => ({
    type: 'InstanceDesiredStateSet',
    data: { instanceId: 'vm1', tenantId: 't1', desired: d },
  });

  it('starts as running: start is a no-op, stop and delete set the desired state', () => {
    expect(startInstance.decide(payload, instance(), ctx({ tenant: owned }))).toEqual([]);
    expect(stopInstance.decide(payload, instance(), ctx({ tenant: owned }))).toEqual([desired('stopped')]);
    expect(startInstance.decide(payload, instance(desired('stopped')), ctx({ tenant: owned }))).toEqual([desired('running')]);
    expect(deleteInstance.decide(payload, instance(), ctx({ tenant: owned }))).toEqual([desired('deleted')]);
  });

  it('refuses start and stop after delete; delete again is a no-op, also once the quota is released', () => {
    const deleted = instance(desired('deleted'));
    expect(thrownCode(() => startInstance.decide(payload, deleted, ctx({ tenant: owned })))).toBe('ILLEGAL_TRANSITION');
    expect(thrownCode(() => stopInstance.decide(payload, deleted, ctx({ tenant: owned })))).toBe('ILLEGAL_TRANSITION');
    expect(deleteInstance.decide(payload, deleted, ctx({ tenant: owned }))).toEqual([]);
    const released = apply(owned, releaseQuota.decide(payload, owned, ctx(undefined)));
    expect(deleteInstance.decide(payload, deleted, ctx({ tenant: released }))).toEqual([]);
    expect(thrownCode(() => stopInstance.decide(payload, instance(), ctx({ tenant: released })))).toBe('NOT_FOUND');
  });

  it('accepts a verb decided on a tenant view older than the request once the instance subject names the tenant', () => {
    const claimed = instance({
      type: 'InstanceObserved',
      data: { instanceId: 'vm1', tenantId: 't1', observed: 'provisioning', providerInstanceId: null, addresses: [], message: null },
    });
    expect(stopInstance.decide(payload, claimed, ctx({ tenant: tenant() }))).toEqual([desired('stopped')]);
    expect(thrownCode(() => stopInstance.decide(payload, instance(), ctx({ tenant: tenant() })))).toBe('NOT_FOUND');
  });

  it("answers NOT_FOUND for an instance that is not the tenant's", () => {
    const other = { tenantId: 't2', instanceId: 'vm1' };
    const t2 = fold(tenantAggregate, [{ type: 'TenantCreated', data: { tenantId: 't2', name: 'T2' } }]);
    for (const command of [startInstance, stopInstance, deleteInstance]) {
      expect(thrownCode(() => command.decide(other, instance(), ctx({ tenant: t2 })))).toBe('NOT_FOUND');
      // t2 requested the same id too, but t1's events are already on the instance's subject.
      expect(
        thrownCode(() =>
          command.decide(
            other,
            instance(desired('stopped')),
            ctx({
              tenant: apply(t2, [
                {
                  type: 'InstanceRequested',
                  data: { ...instancePayload('t2', 'vm1'), userData: null, resources: { instances: 1, ...flavors.small }, requestedAt: NOW },
                },
              ]),
            }),
          ),
        ),
      ).toBe('NOT_FOUND');
    }
  });
});

describe('vps.recordInstanceObserved', () => {
  const observed = { instanceId: 'vm1', tenantId: 't1', observed: 'running' as const, providerInstanceId: 'p-1', addresses: ['203.0.113.7'] };

  it('records a change, keeps the provider id and addresses when a report omits them, ignores a repeat', () => {
    const [first] = recordInstanceObserved.decide(observed, instanceAggregate.initialState, ctx(undefined));
    expect(first).toEqual({ type: 'InstanceObserved', data: { ...observed, message: null } });
    const state = instanceAggregate.evolve(instanceAggregate.initialState, first!);
    expect(recordInstanceObserved.decide(observed, state, ctx(undefined))).toEqual([]);
    const [stopped] = recordInstanceObserved.decide({ instanceId: 'vm1', tenantId: 't1', observed: 'stopped' }, state, ctx(undefined));
    expect(stopped!.data).toMatchObject({ observed: 'stopped', providerInstanceId: 'p-1', addresses: ['203.0.113.7'] });
    expect(thrownCode(() => recordInstanceObserved.decide({ ...observed, tenantId: 't2' }, state, ctx(undefined)))).toBe('ALREADY_EXISTS');
  });
});

describe('pools and provider accounts', () => {
  const secret = (exists: boolean) =>
    exists ? { exists: true, secretId: 'tok', kind: 'provider-token', version: 1, sealed: {}, keyId: 'k', description: null } : { exists: false, version: 0 };
  const account = { accountId: 'acc1', providerId: 'hetzner', region: 'fsn1', config: { project: 'p1' }, tokenSecretId: 'tok' };

  it('stores only the token secret id in the account, and needs the secret to exist', () => {
    const [event] = createProviderAccount.decide(CreateProviderAccount.parse(account), accountAggregate.initialState, ctx({ secret: secret(true) as never }));
    expect(Object.keys(event!.data).sort()).toEqual(['accountId', 'config', 'providerId', 'region', 'tokenSecretId']);
    expect(
      thrownCode(() =>
        createProviderAccount.decide(CreateProviderAccount.parse(account), accountAggregate.initialState, ctx({ secret: secret(false) as never })),
      ),
    ).toBe('PRECONDITION_FAILED');
    expect(CreateProviderAccount.safeParse({ ...account, config: { apiToken: 'hunter2' } }).success).toBe(false);
    expect(CreateProviderAccount.safeParse({ ...account, token: 'hunter2' }).success).toBe(false);
  });

  it('requires an account for provider pools, a site for metal pools, valid CIDRs, and existing references', () => {
    expect(CreatePool.safeParse({ poolId: 'p', class: 'provider', agent: 'none' }).success).toBe(false);
    expect(CreatePool.safeParse({ poolId: 'p', class: 'metal', agent: 'bcd' }).success).toBe(false);
    expect(CreatePool.safeParse({ poolId: 'p', class: 'metal', agent: 'bcd', siteId: 'dc1', policy: { provisioningCidrs: ['10.0.0.0/33'] } }).success).toBe(
      false,
    );
    const metal = CreatePool.parse({
      poolId: 'p',
      class: 'metal',
      agent: 'bcd',
      siteId: 'dc1',
      policy: { provisioningCidrs: ['10.0.0.0/24', '2001:db8::/64'] },
    });
    expect(thrownCode(() => createPool.decide(metal, poolAggregate.initialState, ctx({ accountExists: true, siteExists: false, hardwareProfiles: [] })))).toBe(
      'PRECONDITION_FAILED',
    );
    const created = createPool.decide(metal, poolAggregate.initialState, ctx({ accountExists: true, siteExists: true, hardwareProfiles: [] }));
    expect(createPool.decide(metal, fold(poolAggregate, created), ctx({ accountExists: true, siteExists: true, hardwareProfiles: [] }))).toEqual([]);
  });

  it('refuses a metal pool whose policy selects a hardware profile nobody declares, or an agentless one for a pool that runs bcd', () => {
    const catalog = hardwareProfileCatalog([], undefined);
    const poolWith = (agent: 'bcd' | 'none', hardwareProfile: string) =>
      CreatePool.parse({ poolId: 'p', class: 'metal', agent, siteId: 'dc1', policy: { hardwareProfile } });
    const decide = (command: CreatePool) => () =>
      createPool.decide(command, poolAggregate.initialState, ctx({ accountExists: true, siteExists: true, hardwareProfiles: catalog }));
    expect(thrownCode(decide(poolWith('bcd', 'dell-r650')))).toBe('HARDWARE_PROFILE_UNKNOWN');
    expect(thrownCode(decide(poolWith('bcd', 'agentless')))).toBe('HARDWARE_PROFILE_MISMATCH');
    expect(decide(poolWith('none', 'agentless'))()).toMatchObject([{ type: 'PoolCreated', data: { policy: { hardwareProfile: 'agentless' } } }]);
    expect(decide(poolWith('bcd', 'dmtf-public-tower'))()).toMatchObject([{ type: 'PoolCreated', data: { policy: { hardwareProfile: 'dmtf-public-tower' } } }]);
  });
});

describe('vps command registry', () => {
  it('keeps engine commands off the operator list and lets tenants send only their instance verbs', () => {
    for (const name of ['vps.releaseQuota', 'vps.recordInstanceObserved', 'vps.completeRemediation', 'vps.failRemediation']) {
      expect(engineCommandNames.has(name)).toBe(true);
      expect(operatorCommands.map((c) => c.name)).not.toContain(name);
    }
    expect([...tenantCommands].filter((n) => n.startsWith('vps.')).sort()).toEqual([
      'vps.createInstance',
      'vps.deleteInstance',
      'vps.remediateInstance',
      'vps.startInstance',
      'vps.stopInstance',
    ]);
  });
});
