import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { getNode, listNodes } from '../../projections/nodes/queries.ts';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { applyBatch, projectEntry, type ProjectedMessage } from '../../services/projectors/applyBatch.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import { openWriter, readCheckpoint } from '../../projections/runtime/readModelDatabase.ts';
import { getSite, listSites } from '../../projections/sites/queries.ts';
import { sitesProjection } from '../../projections/sites/projector.ts';
import type { StoredEvent } from '../../schemas/envelope.ts';

const time = (seq: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString();

const stored = (seq: number, type: string, data: unknown, version = 1): StoredEvent => ({
  type,
  version,
  data,
  metadata: {
    eventId: `e-${seq}`,
    aggregateType: 'x.y',
    aggregateId: 'id',
    commandId: `cmd-${seq}`,
    commandName: 'test',
    correlationId: `cmd-${seq}`,
    causationId: `cmd-${seq}`,
    actor: 'test',
    time: time(seq),
  },
});
const message = (seq: number, ...events: StoredEvent[]): ProjectedMessage =>
  projectEntry({ seq, subject: `bc.evt.test.${seq}`, messageId: `cmd-${seq}`, batch: { events } }).message;

const siteCreated = (seq: number, siteId = 'dc1') => message(seq, stored(seq, 'SiteCreated', { siteId, name: 'DC 1', provisioningCidrs: ['10.0.0.0/24'] }, 2));
const nodeEnrolled = (seq: number, nodeId: string, siteId = 'dc1') =>
  message(
    seq,
    stored(seq, 'NodeEnrolled', {
      nodeId,
      siteId,
      bmc: { address: 'https://10.0.0.21', credentialsRef: 'secret:b' },
      hardwareProfile: 'dl325',
      macs: ['52:54:00:aa:bb:01'],
    }),
  );
const maintenance = (seq: number, nodeId: string, on: boolean, reason: string | null) =>
  message(seq, stored(seq, 'NodeMaintenanceSet', { nodeId, on, reason, source: 'operator' }));

const open: Database[] = [];
const writer = (projection: Projection) => {
  const db = openWriter(':memory:', projection);
  open.push(db);
  return db;
};
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

describe('read model database', () => {
  it('openWriter migrates to the projection version and starts the checkpoint at 0', () => {
    const db = writer(nodesProjection);
    expect(db.pragma('user_version', { simple: true })).toBe(nodesProjection.migrations.length);
    expect(readCheckpoint(db)).toEqual({ seq: 0, messageId: null });
  });
});

describe('nodes projection', () => {
  it('nodes projection inserts an enrolled node with its identity and position', () => {
    const db = writer(nodesProjection);
    applyBatch(db, nodesProjection, [siteCreated(1), nodeEnrolled(2, 'n1')]);
    expect(getNode(db, 'n1')).toMatchObject({
      nodeId: 'n1',
      siteId: 'dc1',
      state: 'enrolled',
      maintenance: false,
      maintenanceReason: null,
      bmcAddress: 'https://10.0.0.21',
      bmcCredentialsRef: 'secret:b',
      hardwareProfile: 'dl325',
      macs: ['52:54:00:aa:bb:01'],
      enrolledAt: time(2),
      updatedAt: time(2),
      lastSeq: 2,
    });
    expect(readCheckpoint(db)).toEqual({ seq: 2, messageId: 'cmd-2' });
  });

  it('nodes projection sets and clears maintenance with its reason', () => {
    const db = writer(nodesProjection);
    applyBatch(db, nodesProjection, [nodeEnrolled(1, 'n1'), maintenance(2, 'n1', true, 'disk swap')]);
    expect(getNode(db, 'n1')).toMatchObject({ maintenance: true, maintenanceReason: 'disk swap', updatedAt: time(2), lastSeq: 2, enrolledAt: time(1) });
    applyBatch(db, nodesProjection, [maintenance(3, 'n1', false, 'stale')]);
    expect(getNode(db, 'n1')).toMatchObject({ maintenance: false, maintenanceReason: null, updatedAt: time(3), lastSeq: 3 });
  });

  it('nodes projection pages nodes in id order with a cursor', () => {
    const db = writer(nodesProjection);
    applyBatch(
      db,
      nodesProjection,
      ['n3', 'n1', 'n2'].map((id, i) => nodeEnrolled(i + 1, id)),
    );
    const first = listNodes(db, { limit: 2 });
    expect(first.items.map((n) => n.nodeId)).toEqual(['n1', 'n2']);
    expect(listNodes(db, { limit: 2, cursor: first.nextCursor! })).toMatchObject({ items: [{ nodeId: 'n3' }], nextCursor: null });
  });
});

describe('sites projection', () => {
  it('sites projection creates sites and counts the nodes enrolled at each', () => {
    const db = writer(sitesProjection);
    applyBatch(db, sitesProjection, [
      siteCreated(1, 'dc1'),
      siteCreated(2, 'dc2'),
      nodeEnrolled(3, 'n1', 'dc1'),
      nodeEnrolled(4, 'n2', 'dc1'),
      maintenance(5, 'n1', true, 'x'),
    ]);
    expect(listSites(db)).toEqual([
      { siteId: 'dc1', name: 'DC 1', provisioningCidrs: ['10.0.0.0/24'], createdAt: time(1), nodeCount: 2 },
      { siteId: 'dc2', name: 'DC 1', provisioningCidrs: ['10.0.0.0/24'], createdAt: time(2), nodeCount: 0 },
    ]);
  });

  it('sites projection reads a stored SiteCreated v1 through the upcaster', () => {
    const db = writer(sitesProjection);
    applyBatch(db, sitesProjection, [message(1, stored(1, 'SiteCreated', { siteId: 'old', name: 'Old' }, 1))]);
    expect(getSite(db, 'old')).toMatchObject({ siteId: 'old', provisioningCidrs: [] });
  });
});

describe('applyBatch', () => {
  it('applyBatch skips messages at or below the checkpoint, so redelivery is a no-op', () => {
    const db = writer(nodesProjection);
    applyBatch(db, nodesProjection, [nodeEnrolled(1, 'n1'), maintenance(2, 'n1', true, 'a')]);
    applyBatch(db, nodesProjection, [nodeEnrolled(1, 'n1'), maintenance(2, 'n1', true, 'a')]);
    applyBatch(db, nodesProjection, [maintenance(2, 'n1', true, 'a'), maintenance(3, 'n1', true, 'b'), maintenance(2, 'n1', true, 'a')]);
    expect(getNode(db, 'n1')).toMatchObject({ maintenanceReason: 'b', lastSeq: 3 });
    expect(readCheckpoint(db)).toEqual({ seq: 3, messageId: 'cmd-3' });
  });

  it('applyBatch leaves out unknown event types and still advances the checkpoint', () => {
    const db = writer(nodesProjection);
    const unknown = message(1, stored(1, 'NodeTeleported', { to: 'mars' }));
    expect(unknown.events).toEqual([]);
    applyBatch(db, nodesProjection, [unknown, nodeEnrolled(2, 'n1')]);
    expect(getNode(db, 'n1')).toMatchObject({ lastSeq: 2 });
    expect(readCheckpoint(db).seq).toBe(2);
  });

  it('applyBatch applies every event of a multi-event message in order', () => {
    const db = writer(nodesProjection);
    const enroll = stored(1, 'NodeEnrolled', {
      nodeId: 'n1',
      siteId: 'dc1',
      bmc: { address: 'https://10.0.0.21', credentialsRef: 'secret:b' },
      hardwareProfile: 'dl325',
      macs: ['52:54:00:aa:bb:01'],
    });
    applyBatch(db, nodesProjection, [message(1, enroll, stored(1, 'NodeMaintenanceSet', { nodeId: 'n1', on: true, reason: 'r', source: 'bmc' }))]);
    expect(getNode(db, 'n1')).toMatchObject({ maintenance: true, maintenanceReason: 'r', lastSeq: 1 });
  });

  it('projectEntry rejects a whole message whose known event does not match its schema, and it applies as nothing', () => {
    const db = writer(nodesProjection);
    applyBatch(db, nodesProjection, [nodeEnrolled(1, 'n1')]);
    const valid = stored(2, 'NodeMaintenanceSet', { nodeId: 'n1', on: true, reason: 'r', source: 'operator' });
    const broken = projectEntry({
      seq: 2,
      subject: 'bc.evt.metal.node.n1',
      messageId: 'cmd-2',
      batch: { events: [valid, stored(2, 'NodeMaintenanceSet', { nodeId: 42 })] },
    });
    expect(broken.rejection).toMatchObject({ reason: 'UNDECODABLE' });
    applyBatch(db, nodesProjection, [broken.message]);
    expect(getNode(db, 'n1')).toMatchObject({ maintenance: false, lastSeq: 1 });
    expect(readCheckpoint(db)).toEqual({ seq: 2, messageId: 'cmd-2' });
  });

  it('projectEntry passes on the rejection of a message the event store did not write', () => {
    const forged = projectEntry({ seq: 5, subject: 'bc.evt.metal.node.n1', messageId: null, rejection: { reason: 'MAC_MISSING', detail: 'raw publish' } });
    expect(forged).toEqual({
      message: { seq: 5, subject: 'bc.evt.metal.node.n1', messageId: null, events: [] },
      rejection: { reason: 'MAC_MISSING', detail: 'raw publish' },
    });
  });

  it('applyBatch rolls back when a projection step fails', () => {
    const db = writer(nodesProjection);
    expect(() => applyBatch(db, nodesProjection, [nodeEnrolled(1, 'n1'), nodeEnrolled(2, 'n1')])).toThrow(/UNIQUE/);
    expect(getNode(db, 'n1')).toBeUndefined();
    expect(readCheckpoint(db).seq).toBe(0);
  });
});
