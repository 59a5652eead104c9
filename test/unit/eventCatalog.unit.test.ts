import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEvent, EventCatalog, UnknownEventError } from '../../schemas/eventCatalog.ts';
import { eventCatalog } from '../../schemas/events.ts';

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
};

describe('EventCatalog', () => {
  it('EventCatalog upcasts a SiteCreated v1 to v2 with no provisioning CIDRs', () => {
    expect(eventCatalog.read({ type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name: 'DC 1' } })).toEqual({
      type: 'SiteCreated',
      data: { siteId: 'dc1', name: 'DC 1', provisioningCidrs: [] },
    });
  });

  it('EventCatalog keeps fields a v1 event already carried when upcasting', () => {
    const read = eventCatalog.read({ type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name: 'DC 1', provisioningCidrs: ['10.0.0.0/8'] } });
    expect(read.data).toEqual({ siteId: 'dc1', name: 'DC 1', provisioningCidrs: ['10.0.0.0/8'] });
  });

  it('EventCatalog reads a current-version event as stored', () => {
    const data = { siteId: 'dc1', name: 'DC 1', provisioningCidrs: ['10.0.0.0/24'] };
    expect(eventCatalog.read({ type: 'SiteCreated', version: 2, data })).toEqual({ type: 'SiteCreated', data });
  });

  it('EventCatalog refuses a version newer than it knows with UnknownEventError', () => {
    const err = thrown(() => eventCatalog.read({ type: 'SiteCreated', version: 3, data: {} }));
    expect(err).toBeInstanceOf(UnknownEventError);
    expect(err).toMatchObject({ code: 'UNKNOWN_EVENT', eventType: 'SiteCreated', eventVersion: 3 });
  });

  it('EventCatalog refuses an unknown event type with UnknownEventError', () => {
    const err = thrown(() => eventCatalog.read({ type: 'NodeExploded', version: 1, data: {} }));
    expect(err).toBeInstanceOf(UnknownEventError);
    expect(err).toMatchObject({ code: 'UNKNOWN_EVENT', eventType: 'NodeExploded', eventVersion: 1 });
    expect(eventCatalog.has('NodeExploded')).toBe(false);
  });

  it('EventCatalog rejects stored data that does not match the current schema after upcasting', () => {
    expect(() => eventCatalog.read({ type: 'SiteCreated', version: 1, data: { siteId: 'dc1' } })).toThrow(z.ZodError);
    expect(() => eventCatalog.read({ type: 'NodeMaintenanceSet', version: 1, data: { nodeId: 'n1', on: true, reason: null, source: 'cron' } })).toThrow(
      z.ZodError,
    );
  });

  it('EventCatalog writes at the current version with validated data', () => {
    expect(eventCatalog.write({ type: 'SiteCreated', data: { siteId: 'dc1', name: 'DC 1', provisioningCidrs: [] } })).toEqual({
      type: 'SiteCreated',
      version: 2,
      data: { siteId: 'dc1', name: 'DC 1', provisioningCidrs: [] },
    });
    expect(eventCatalog.write({ type: 'NodeMaintenanceSet', data: { nodeId: 'n1', on: false, reason: null, source: 'operator' } }).version).toBe(1);
  });

  it('EventCatalog refuses to write an unknown type or invalid data', () => {
    expect(thrown(() => eventCatalog.write({ type: 'Nope', data: {} } as never))).toMatchObject({ code: 'UNKNOWN_EVENT', eventVersion: 0 });
    expect(() => eventCatalog.write({ type: 'SiteCreated', data: { siteId: 'dc1', name: 'x', provisioningCidrs: ['not-a-cidr'] } })).toThrow(z.ZodError);
  });

  it('EventCatalog applies upcasters in version order', () => {
    const Renamed = defineEvent('Renamed', z.object({ to: z.string(), by: z.string() }), {
      version: 3,
      upcasters: { 1: (d) => ({ to: (d as { name: string }).name }), 2: (d) => ({ ...(d as object), by: 'unknown' }) },
    });
    const catalog = new EventCatalog([Renamed]);
    expect(catalog.read({ type: 'Renamed', version: 1, data: { name: 'a' } }).data).toEqual({ to: 'a', by: 'unknown' });
    expect(catalog.read({ type: 'Renamed', version: 2, data: { to: 'b' } }).data).toEqual({ to: 'b', by: 'unknown' });
  });

  it('defineEvent refuses a version history with a missing upcaster', () => {
    expect(() => defineEvent('Gap', z.object({}), { version: 3, upcasters: { 1: (d) => d } })).toThrow(/missing upcaster from v2 to v3/);
  });

  it('EventCatalog refuses a type declared twice', () => {
    const a = defineEvent('Twice', z.object({}));
    expect(() => new EventCatalog([a, a])).toThrow(/declared twice/);
  });
});

describe('EventCatalog version checks', () => {
  it('EventCatalog refuses a zero, negative or fractional version with UnknownEventError (regression)', () => {
    for (const version of [0, -1, 1.5]) {
      expect(() => eventCatalog.read({ type: 'SiteCreated', version, data: { siteId: 'dc1', name: 'x' } })).toThrow(UnknownEventError);
    }
  });
});
