import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { activeHoldsAt, holdById, listHolds } from '../../projections/vps/holdQueries.ts';
import { vpsProjection } from '../../projections/vps/projector.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import { PlacementRequest } from '../../schemas/vps/placement.ts';
import { placementSnapshotWithHolds } from '../../services/vps/placement/candidates.ts';
import { place } from '../../services/vps/placement/placement.ts';
import type { NodeView } from '../../schemas/metal/views.ts';

const T0 = Date.parse('2026-12-06T12:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1_000).toISOString();
const size = { vcpus: 4, memoryMib: 4_096, diskGib: 40 };
const placed = (holdId: string, holder: { tenantId: string } | { poolId: string }, expiresIn: number, siteId = 'dc1'): HoldBookEvent => ({
  type: 'HoldPlaced',
  data: {
    siteId,
    holdId,
    holder,
    nodes: [{ nodeId: 'n1', resources: size, freeBefore: { vcpus: 8, memoryMib: 8_192, diskGib: 80 } }],
    wholeNodes: false,
    selector: {},
    durationSeconds: expiresIn,
    considered: 1,
    placedAt: at(0),
    expiresAt: at(expiresIn),
  },
});

function dbAfter(events: readonly HoldBookEvent[], twice = false) {
  const db = new Database(':memory:');
  for (const m of vpsProjection.migrations) db.exec(m);
  const all = twice ? [...events, ...events] : events;
  all.forEach((e, i) => vpsProjection.apply(db, e, { time: at(i) } as EventMetadata, { seq: i + 1, subject: 'bc.evt.vps.holdBook.dc1' }));
  return db;
}

const events: HoldBookEvent[] = [
  placed('h1', { tenantId: 't1' }, 600),
  placed('h2', { tenantId: 't2' }, 60),
  placed('h3', { poolId: 'p1' }, 600, 'dc2'),
  { type: 'HoldReleased', data: { siteId: 'dc2', holdId: 'h3', holder: { poolId: 'p1' }, releasedAt: at(10) } },
];

describe('holds read model', () => {
  it('shows each hold active, expired or released as of the time asked; applied twice equals once', () => {
    const db = dbAfter(events);
    const status = (nowS: number, tenantId: string | null = null) =>
      listHolds(db, { tenantId, siteId: null, status: null }, T0 + nowS * 1_000)
        .map((h) => [h.holdId, h.status])
        .sort();
    expect(status(30)).toEqual([
      ['h1', 'active'],
      ['h2', 'active'],
      ['h3', 'released'],
    ]);
    expect(status(60)).toEqual([
      ['h1', 'active'],
      ['h2', 'expired'],
      ['h3', 'released'],
    ]);
    expect(status(60, 't2')).toEqual([['h2', 'expired']]);
    expect(listHolds(db, { tenantId: null, siteId: 'dc1', status: 'active' }, T0 + 60_000).map((h) => h.holdId)).toEqual(['h1']);
    expect(holdById(db, 'h1', 't2', T0)).toBeUndefined();
    expect(holdById(db, 'h1', 't1', T0)).toMatchObject({ siteId: 'dc1', holder: { tenantId: 't1' }, nodes: [{ nodeId: 'n1', resources: size }] });
    const twice = dbAfter(events, true);
    expect(listHolds(twice, { tenantId: null, siteId: null, status: null }, T0)).toEqual(listHolds(db, { tenantId: null, siteId: null, status: null }, T0));
  });

  it("keeps an active hold's capacity from every placement but its holder's, and nothing once it expired", () => {
    const db = dbAfter([placed('h1', { tenantId: 't1' }, 600)]);
    const node = {
      nodeId: 'n1',
      labels: { 'bc.dev/driver.crun': '1.0' },
      state: 'deployed',
      maintenance: false,
      agent: 'bcd',
      connected: true,
      inventory: { cpus: { cores: 6 }, memoryMiB: 8_192, disks: [{ sizeBytes: 80 * 1_024 ** 3 }] },
    } as unknown as NodeView;
    const request = (tenantId: string) => PlacementRequest.parse({ instanceId: 'i1', tenantId, poolId: 'p9', runtime: 'crun', resources: size });
    const snapshotAt = (s: number) =>
      placementSnapshotWithHolds([node], { allocated: new Map(), holds: activeHoldsAt(db, 'dc1', T0 + s * 1_000), nowMs: T0 + s * 1_000 });
    expect(place(request('t1'), snapshotAt(10))).toMatchObject({ placed: true, fromHolds: [{ holdId: 'h1', resources: size }] });
    expect(place(request('t2'), snapshotAt(10))).toMatchObject({ placed: false, excluded: [{ nodeId: 'n1', why: 'INSUFFICIENT_CAPACITY' }] });
    expect(place(request('t2'), snapshotAt(600))).toMatchObject({ placed: true, nodeId: 'n1', fromHolds: [] });
  });
});
