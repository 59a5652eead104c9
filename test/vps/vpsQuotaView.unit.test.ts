import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { vpsProjection } from '../../projections/vps/projector.ts';
import { quotaOf } from '../../projections/vps/queries.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { VpsEvent } from '../../schemas/vps/events.ts';

const small = { instances: 1, vcpus: 1, memoryMib: 1_024, diskGib: 25 };
const none = { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 };
const ids = { tenantId: 't1', instanceId: 'vm1' };

function quotaAfter(events: VpsEvent[]) {
  const db = new Database(':memory:');
  for (const m of vpsProjection.migrations) db.exec(m);
  const all: VpsEvent[] = [
    { type: 'TenantCreated', data: { tenantId: 't1', name: 'T1' } },
    { type: 'TenantQuotaSet', data: { tenantId: 't1', instances: 4, vcpus: 4, memoryMib: 4_096, diskGib: 100 } },
    {
      type: 'InstanceRequested',
      data: { ...ids, poolId: 'p1', flavorId: 'small', image: 'debian-12', sshKeys: ['k'], userData: null, resources: small, requestedAt: 't' },
    },
    ...events,
  ];
  all.forEach((e, i) => vpsProjection.apply(db, e, { time: `2026-12-03T12:00:0${i}.000Z` } as EventMetadata, { seq: i + 1, subject: 'bc.evt.vps.x.y' }));
  return quotaOf(db, 't1');
}
const observed = (state: 'provisioning' | 'running' | 'stopped' | 'deleted'): VpsEvent => ({
  type: 'InstanceObserved',
  data: { ...ids, observed: state, providerInstanceId: state === 'provisioning' ? null : 'srv-1', addresses: [], message: null },
});
const released: VpsEvent = { type: 'QuotaReleased', data: ids };

describe('vps read model quota', () => {
  it('counts a reservation used from the first running observation on, and stays used when the instance stops', () => {
    expect(quotaAfter([observed('provisioning')])).toMatchObject({ used: none, reserved: small });
    expect(quotaAfter([observed('provisioning'), observed('running')])).toMatchObject({ used: small, reserved: none });
    expect(quotaAfter([observed('running'), observed('stopped')])).toMatchObject({ used: small, reserved: none });
  });

  it('never brings a released reservation back, however late a running report comes', () => {
    expect(quotaAfter([observed('running'), observed('deleted'), released])).toMatchObject({ used: none, reserved: none });
    expect(quotaAfter([released, observed('running')])).toMatchObject({ used: none, reserved: none });
  });

  it('still reads the QuotaUsed of logs written before the reconciler stopped sending it', () => {
    expect(quotaAfter([{ type: 'QuotaUsed', data: ids }])).toMatchObject({ used: small, reserved: none });
  });
});
