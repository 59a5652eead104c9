import { Map as PersistentMap } from 'immutable';
import { describe, expect, it } from 'vitest';
import type { HoldBookEvent } from '../../schemas/vps/events.ts';
import { PlaceHold, ReleaseHold, type HoldCandidate } from '../../schemas/vps/holdCommands.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import type { TenantState } from '../../schemas/vps/tenantState.ts';
import { isInProcessOnly } from '../../schemas/commandExposure.ts';
import { holdBookAggregate } from '../../services/vps/hold/holdBook.ts';
import { placeHold } from '../../services/vps/hold/place.ts';
import { releaseHold } from '../../services/vps/hold/release.ts';
import { thrownCode } from '../support/thrownCode.ts';

const T0 = '2026-12-06T12:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1_000).toISOString();
const tenant = (tenantId: string): TenantState => ({
  exists: true,
  tenantId,
  name: tenantId,
  quota: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 },
  instances: PersistentMap(),
  usage: { used: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 }, reserved: { instances: 0, vcpus: 0, memoryMib: 0, diskGib: 0 } },
});
const pool = (agent: 'bcd' | 'none', siteId = 'dc1'): PoolState => ({
  exists: true,
  poolId: 'p1',
  class: 'metal',
  agent,
  accountId: null,
  siteId,
  policy: { allowUnverifiedRelease: false, provisioningCidrs: [] },
  offeredTo: [],
});
const deps = { tenant: tenant('t1'), pool: undefined };
const ctx = (now = T0, dependencies: { tenant: TenantState | undefined; pool: PoolState | undefined } = deps) => ({
  commandId: 'cmd-00000001',
  actor: 'test',
  now,
  dependencies,
});
const rctx = (now = T0) => ({ commandId: 'cmd-00000002', actor: 'test', now, dependencies: undefined });
/** The `HoldPlaced` among the events, for reading what it decided. */
const placedIn = (events: readonly HoldBookEvent[]) => {
  const event = events.find((e) => e.type === 'HoldPlaced');
  if (event?.type !== 'HoldPlaced') throw new Error('no HoldPlaced');
  return event.data;
};
const node = (nodeId: string, vcpus: number, over: Partial<HoldCandidate> = {}): HoldCandidate => ({
  nodeId,
  labels: { zone: 'a' },
  capacity: { vcpus, memoryMib: vcpus * 4_096, diskGib: vcpus * 50 },
  allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
  schedulable: true,
  agentless: false,
  ...over,
});
const nodes = [node('n1', 8), node('n2', 16), node('n3', 32)];
const command = (over: Record<string, unknown> = {}) =>
  PlaceHold.parse({
    holdId: 'h1',
    siteId: 'dc1',
    holder: { tenantId: 't1' },
    nodes: 1,
    resources: { vcpus: 6, memoryMib: 8_192, diskGib: 100 },
    selector: {},
    durationSeconds: 600,
    candidates: nodes,
    ...over,
  });
const fold = (events: readonly HoldBookEvent[]) => events.reduce((s, e) => holdBookAggregate.evolve(s, e), holdBookAggregate.initialState);
const issuesOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return { code: (err as { code: string }).code, issues: (err as { issues?: unknown }).issues };
  }
  return undefined;
};

describe('vps.placeHold', () => {
  it('holds capacity on distinct nodes by best fit, and records which nodes, what each had free, and until when', () => {
    const events = placeHold.decide(command({ nodes: 2 }), holdBookAggregate.initialState, ctx());
    expect(events).toEqual([
      {
        type: 'HoldPlaced',
        data: {
          siteId: 'dc1',
          holdId: 'h1',
          holder: { tenantId: 't1' },
          nodes: [
            { nodeId: 'n1', resources: { vcpus: 6, memoryMib: 8_192, diskGib: 100 }, freeBefore: { vcpus: 8, memoryMib: 32_768, diskGib: 400 } },
            { nodeId: 'n2', resources: { vcpus: 6, memoryMib: 8_192, diskGib: 100 }, freeBefore: { vcpus: 16, memoryMib: 65_536, diskGib: 800 } },
          ],
          wholeNodes: false,
          selector: {},
          durationSeconds: 600,
          considered: 3,
          placedAt: T0,
          expiresAt: at(600),
        },
      },
    ]);
    // The same hold again is a no-op; another request under its id is refused.
    expect(placeHold.decide(command({ nodes: 2 }), fold(events), ctx(at(1)))).toEqual([]);
    expect(thrownCode(() => placeHold.decide(command({ nodes: 3 }), fold(events), ctx(at(1))))).toBe('ALREADY_EXISTS');
  });

  it('never takes capacity another hold keeps, until that hold expires or is released: it stops counting by the clock alone', () => {
    const first = fold(placeHold.decide(command({ resources: { vcpus: 30, memoryMib: 1_024, diskGib: 10 }, durationSeconds: 60 }), fold([]), ctx()));
    expect(Object.values(first.holds).map((h) => h.nodes.map((n) => n.nodeId))).toEqual([['n3']]);
    const big = command({ holdId: 'h2', holder: { tenantId: 't2' }, resources: { vcpus: 20, memoryMib: 1_024, diskGib: 10 } });
    const refusal = issuesOf(() => placeHold.decide(big, first, ctx(at(30), { tenant: tenant('t2'), pool: undefined })));
    expect(refusal).toEqual({
      code: 'NO_CAPACITY',
      issues: [
        { path: 'n1', message: 'INSUFFICIENT_CAPACITY (short of vcpus)' },
        { path: 'n2', message: 'INSUFFICIENT_CAPACITY (short of vcpus)' },
        { path: 'n3', message: 'INSUFFICIENT_CAPACITY (short of vcpus)' },
      ],
    });
    // The holder's own hold counts against it too: a new hold never stands on another.
    expect(thrownCode(() => placeHold.decide({ ...big, holder: { tenantId: 't1' } }, first, ctx(at(30))))).toBe('NO_CAPACITY');
    // At expiry exactly the hold keeps nothing, with no event: the same request now fits on n3.
    const later = placeHold.decide(big, first, ctx(at(60), { tenant: tenant('t2'), pool: undefined }));
    expect(placedIn(later).nodes.map((n) => n.nodeId)).toEqual(['n3']);
    // Released before it expires: the same, from the release on.
    const released = holdBookAggregate.evolve(first, releaseHold.decide({ siteId: 'dc1', holdId: 'h1' }, first, rctx(at(10)))[0]!);
    const t2 = { tenant: tenant('t2'), pool: undefined };
    expect(placeHold.decide(big, released, ctx(at(30), t2))).toHaveLength(1);
  });

  it('holds whole nodes only where nothing is placed or held, the smallest first, all or nothing', () => {
    const candidates = [node('n1', 8), node('n2', 32), node('n3', 16), node('n4', 0)];
    // An instance placed on n1 (the book's word counts, never a candidate's `allocated`).
    const onN1: HoldBookEvent = {
      type: 'InstancePlaced',
      data: {
        siteId: 'dc1',
        instanceId: 'i1',
        tenantId: 't1',
        poolId: 'p1',
        runtime: 'crun',
        nodeId: 'n1',
        resources: { vcpus: 1, memoryMib: 0, diskGib: 0 },
        freeBefore: { vcpus: 8, memoryMib: 0, diskGib: 0 },
        fromHolds: [],
        considered: 4,
        placedAt: T0,
      },
    };
    const events = [onN1, ...placeHold.decide(command({ resources: undefined, nodes: 2, candidates }), fold([onN1]), ctx())];
    const placed = placedIn(events);
    expect(placed.wholeNodes).toBe(true);
    expect(placed.nodes.map((n) => [n.nodeId, n.resources.vcpus])).toEqual([
      ['n3', 16],
      ['n2', 32],
    ]);
    const refusal = issuesOf(() => placeHold.decide(command({ holdId: 'h2', resources: undefined, nodes: 1, candidates }), fold(events), ctx()));
    expect(refusal).toEqual({
      code: 'NO_CAPACITY',
      issues: [
        { path: 'n1', message: 'INSUFFICIENT_CAPACITY (short of vcpus)' },
        { path: 'n2', message: 'INSUFFICIENT_CAPACITY (short of vcpus, memoryMib, diskGib)' },
        { path: 'n3', message: 'INSUFFICIENT_CAPACITY (short of vcpus, memoryMib, diskGib)' },
        { path: 'n4', message: 'INSUFFICIENT_CAPACITY (short of vcpus, memoryMib, diskGib)' },
      ],
    });
    // Three whole nodes when two are free: none is held.
    expect(thrownCode(() => placeHold.decide(command({ resources: undefined, nodes: 3, candidates }), fold([onN1]), ctx()))).toBe('NO_CAPACITY');
  });

  it('never holds agentless nodes, and refuses an agentless pool (the Talos pool) outright', () => {
    const talos = [node('t1', 64, { agentless: true }), node('t2', 64, { agentless: true }), node('x', 64, { labels: { zone: 'b' } })];
    const zoneA = { matchLabels: { zone: 'a' } };
    expect(issuesOf(() => placeHold.decide(command({ candidates: talos, selector: zoneA }), fold([]), ctx()))).toEqual({
      code: 'AGENTLESS_NOT_HOLDABLE',
      issues: [
        { path: 't1', message: 'AGENTLESS' },
        { path: 't2', message: 'AGENTLESS' },
        { path: 'x', message: 'SELECTOR_MISMATCH' },
      ],
    });
    expect(thrownCode(() => placeHold.decide(command({ holder: { poolId: 'p1' } }), fold([]), ctx(T0, { tenant: undefined, pool: pool('none') })))).toBe(
      'AGENTLESS_NOT_HOLDABLE',
    );
    expect(thrownCode(() => placeHold.decide(command({ holder: { poolId: 'p1' } }), fold([]), ctx(T0, { tenant: undefined, pool: pool('bcd', 'dc2') })))).toBe(
      'PRECONDITION_FAILED',
    );
    expect(thrownCode(() => placeHold.decide(command({ holder: { poolId: 'p1' } }), fold([]), ctx(T0, { tenant: undefined, pool: pool('bcd') })))).toBe(
      'no error',
    );
    expect(thrownCode(() => placeHold.decide(command(), fold([]), ctx(T0, { tenant: { exists: false }, pool: undefined })))).toBe('PRECONDITION_FAILED');
  });

  it('is sent only by the API route, which carries the nodes read model (never served over NATS)', () => {
    expect(placeHold.exposure).toEqual(['edge']);
    expect(isInProcessOnly(placeHold.exposure)).toBe(true);
    expect(PlaceHold.safeParse({ ...command(), durationSeconds: 10 }).success).toBe(false);
  });
});

describe('vps.releaseHold', () => {
  const placed = fold(placeHold.decide(command(), fold([]), ctx()));
  it('releases an active hold once; a released or expired one holds nothing, so releasing it again appends nothing', () => {
    const events = releaseHold.decide(ReleaseHold.parse({ siteId: 'dc1', holdId: 'h1' }), placed, rctx(at(5)));
    expect(events).toEqual([{ type: 'HoldReleased', data: { siteId: 'dc1', holdId: 'h1', holder: { tenantId: 't1' }, releasedAt: at(5) } }]);
    const released = fold([...placeHold.decide(command(), fold([]), ctx()), ...events]);
    expect(released.holds.h1!.releasedAt).toBe(at(5));
    expect(releaseHold.decide({ siteId: 'dc1', holdId: 'h1' }, released, rctx(at(6)))).toEqual([]);
    expect(releaseHold.decide({ siteId: 'dc1', holdId: 'h1' }, placed, rctx(at(600)))).toEqual([]);
  });

  it("answers HOLD_UNKNOWN for a hold that does not exist and, to a tenant, for another's", () => {
    expect(thrownCode(() => releaseHold.decide({ siteId: 'dc1', holdId: 'nope' }, placed, rctx()))).toBe('HOLD_UNKNOWN');
    expect(thrownCode(() => releaseHold.decide({ siteId: 'dc1', holdId: 'h1', tenantId: 't2' }, placed, rctx()))).toBe('HOLD_UNKNOWN');
    expect(releaseHold.decide({ siteId: 'dc1', holdId: 'h1', tenantId: 't1' }, placed, rctx())).toHaveLength(1);
  });
});

describe('the hold book', () => {
  it('forgets a hold a day after it ended, once another is placed; a release of it is then HOLD_UNKNOWN', () => {
    const first = placeHold.decide(command({ durationSeconds: 60 }), fold([]), ctx());
    const justBefore = placeHold.decide(command({ holdId: 'h2' }), fold(first), ctx(at(60 + 86_399)));
    expect(Object.keys(fold([...first, ...justBefore]).holds).sort()).toEqual(['h1', 'h2']);
    const dayAfter = placeHold.decide(command({ holdId: 'h3' }), fold(first), ctx(at(60 + 86_400)));
    const book = fold([...first, ...dayAfter]);
    expect(Object.keys(book.holds)).toEqual(['h3']);
    expect(thrownCode(() => releaseHold.decide({ siteId: 'dc1', holdId: 'h1' }, book, rctx(at(60 + 86_401))))).toBe('HOLD_UNKNOWN');
  });
});
